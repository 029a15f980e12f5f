"""What a team shares through the command line and the dashboard alike: who may serve
the dashboard where and with which roles (`serving`), the one checked, audited write path
of triage actions (`triage`), accepting a baseline (`baselines`), people's annotations
as a calibration file (`labels`) and the dashboard's server started (`dashboard_start`)."""
