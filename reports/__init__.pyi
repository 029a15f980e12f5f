from .formats import FORMATS as FORMATS
from .formats import ReportFormat as ReportFormat
from .terminal import render_terminal as render_terminal
from .writers import write_report as write_report

STORE_WITH_REPORT: str
