"""The string and number formats of ajv-formats 3.0.1 ("full" mode), as promptfoo checks them.

promptfoo validates `is-json` / `contains-json` schemas with Ajv 8 and `addFormats(ajv)`,
which registers every format below. The rules are ajv-formats' own: its regular
expressions (JavaScript's `$` is `\\Z` here, `.` excludes JavaScript's four line
terminators, `\\d` is ASCII; the `url` expression, a Unicode one in JavaScript, spells out
`\\s` and `\\d` as JavaScript defines them) and its date, time and URI functions. A format
applies to strings, or for `int32`, `int64`, `float` and `double` to numbers; any other
value conforms.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from evals.common import jsengine

_ASCII_I = re.ASCII | re.IGNORECASE
_SPACE = "\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_LINE_TERMINATORS = re.compile("[\n\r\u2028\u2029]")
_DATE_TIME_SEPARATOR = re.compile(f"[tT{_SPACE}]")
_NOT_URI_FRAGMENT = re.compile("[/:]")
_Z_ANCHOR = re.compile(r"[^\\]\\Z")
_BYTE_LINE = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?")
_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_MIN_INT32, _MAX_INT32 = -(2**31), 2**31 - 1

_DURATION = re.compile(
    "^P(?!\\Z)((\\d+Y)?(\\d+M)?(\\d+D)?(T(?=\\d)(\\d+H)?(\\d+M)?(\\d+S)?)?|(\\d+W)?)\\Z",
    re.ASCII,
)
_URI_REFERENCE = re.compile(
    "^(?:[a-z][a-z0-9+\\-.]*:)?(?:\\/?\\/(?:(?:[a-z0-9\\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\\[(?:(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:){0,1}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|[01]?\\d\\d?)\\.){3}(?:25[0-5]|2[0-4]\\d|[01]?\\d\\d?))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)|[Vv][0-9a-f]+\\.[a-z0-9\\-._~!$&'()*+,;=:]+)\\]|(?:(?:25[0-5]|2[0-4]\\d|[01]?\\d\\d?)\\.){3}(?:25[0-5]|2[0-4]\\d|[01]?\\d\\d?)|(?:[a-z0-9\\-._~!$&'\"()*+,;=]|%[0-9a-f]{2})*)(?::\\d*)?(?:\\/(?:[a-z0-9\\-._~!$&'\"()*+,;=:@]|%[0-9a-f]{2})*)*|\\/(?:(?:[a-z0-9\\-._~!$&'\"()*+,;=:@]|%[0-9a-f]{2})+(?:\\/(?:[a-z0-9\\-._~!$&'\"()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[a-z0-9\\-._~!$&'\"()*+,;=:@]|%[0-9a-f]{2})+(?:\\/(?:[a-z0-9\\-._~!$&'\"()*+,;=:@]|%[0-9a-f]{2})*)*)?(?:\\?(?:[a-z0-9\\-._~!$&'\"()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[a-z0-9\\-._~!$&'\"()*+,;=:@/?]|%[0-9a-f]{2})*)?\\Z",
    _ASCII_I,
)
_URI_TEMPLATE = re.compile(
    "^(?:(?:[^\\x00-\\x20\"'<>%\\\\^`{|}]|%[0-9a-f]{2})|\\{[+#./;?&=,!@|]?(?:[a-z0-9_]|%[0-9a-f]{2})+(?::[1-9][0-9]{0,3}|\\*)?(?:,(?:[a-z0-9_]|%[0-9a-f]{2})+(?::[1-9][0-9]{0,3}|\\*)?)*\\})*\\Z",
    _ASCII_I,
)
_NOT_SPACE = f"[^{_SPACE}]"
_LABEL = r"[a-z0-9\u00a1-\uffff]+"
_URL = re.compile(  # \s is JavaScript's; case folding adds nothing outside ASCII here
    rf"^(?:https?|ftp):\/\/(?:{_NOT_SPACE}+(?::{_NOT_SPACE}*)?@)?"
    r"(?:(?!(?:10|127)(?:\.\d{1,3}){3})(?!(?:169\.254|192\.168)(?:\.\d{1,3}){2})"
    r"(?!172\.(?:1[6-9]|2\d|3[0-1])(?:\.\d{1,3}){2})"
    r"(?:[1-9]\d?|1\d\d|2[01]\d|22[0-3])(?:\.(?:1?\d{1,2}|2[0-4]\d|25[0-5])){2}"
    r"(?:\.(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-4]))"
    rf"|(?:(?:{_LABEL}-)*{_LABEL})(?:\.(?:{_LABEL}-)*{_LABEL})*"
    r"(?:\.(?:[a-z\u00a1-\uffff]{2,})))"
    rf"(?::\d{{2,5}})?(?:\/{_NOT_SPACE}*)?\Z",
    _ASCII_I,
)
_EMAIL = re.compile(
    "^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\\Z",
    _ASCII_I,
)
_HOSTNAME = re.compile(
    "^(?=[^\\n\\r\\u2028\\u2029]{1,253}\\.?\\Z)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[-0-9a-z]{0,61}[0-9a-z])?)*\\.?\\Z",
    _ASCII_I,
)
_IPV4 = re.compile(
    "^(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\Z",
    re.ASCII,
)
_IPV6 = re.compile(
    "^((([0-9a-f]{1,4}:){7}([0-9a-f]{1,4}|:))|(([0-9a-f]{1,4}:){6}(:[0-9a-f]{1,4}|((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3})|:))|(([0-9a-f]{1,4}:){5}(((:[0-9a-f]{1,4}){1,2})|:((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3})|:))|(([0-9a-f]{1,4}:){4}(((:[0-9a-f]{1,4}){1,3})|((:[0-9a-f]{1,4})?:((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}))|:))|(([0-9a-f]{1,4}:){3}(((:[0-9a-f]{1,4}){1,4})|((:[0-9a-f]{1,4}){0,2}:((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}))|:))|(([0-9a-f]{1,4}:){2}(((:[0-9a-f]{1,4}){1,5})|((:[0-9a-f]{1,4}){0,3}:((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}))|:))|(([0-9a-f]{1,4}:){1}(((:[0-9a-f]{1,4}){1,6})|((:[0-9a-f]{1,4}){0,4}:((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}))|:))|(:(((:[0-9a-f]{1,4}){1,7})|((:[0-9a-f]{1,4}){0,5}:((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)(\\.(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)){3}))|:)))\\Z",
    _ASCII_I,
)
_UUID = re.compile(
    "^(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}\\Z",
    _ASCII_I,
)
_JSON_POINTER = re.compile(
    "^(?:\\/(?:[^~/]|~0|~1)*)*\\Z",
    re.ASCII,
)
_JSON_POINTER_URI_FRAGMENT = re.compile(
    "^#(?:\\/(?:[a-z0-9_\\-.!$&'()*+,;:=@]|%[0-9a-f]{2}|~0|~1)*)*\\Z",
    _ASCII_I,
)
_RELATIVE_JSON_POINTER = re.compile(
    "^(?:0|[1-9][0-9]*)(?:#|(?:\\/(?:[^~/]|~0|~1)*)*)\\Z",
    re.ASCII,
)
_DATE = re.compile(
    "^(\\d\\d\\d\\d)-(\\d\\d)-(\\d\\d)\\Z",
    re.ASCII,
)
_TIME = re.compile(
    "^(\\d\\d):(\\d\\d):(\\d\\d(?:\\.\\d+)?)(z|([+-])(\\d\\d)(?::?(\\d\\d))?)?\\Z",
    _ASCII_I,
)
_URI = re.compile(
    "^(?:[a-z][a-z0-9+\\-.]*:)(?:\\/?\\/(?:(?:[a-z0-9\\-._~!$&'()*+,;=:]|%[0-9a-f]{2})*@)?(?:\\[(?:(?:(?:(?:[0-9a-f]{1,4}:){6}|::(?:[0-9a-f]{1,4}:){5}|(?:[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){4}|(?:(?:[0-9a-f]{1,4}:){0,1}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){3}|(?:(?:[0-9a-f]{1,4}:){0,2}[0-9a-f]{1,4})?::(?:[0-9a-f]{1,4}:){2}|(?:(?:[0-9a-f]{1,4}:){0,3}[0-9a-f]{1,4})?::[0-9a-f]{1,4}:|(?:(?:[0-9a-f]{1,4}:){0,4}[0-9a-f]{1,4})?::)(?:[0-9a-f]{1,4}:[0-9a-f]{1,4}|(?:(?:25[0-5]|2[0-4]\\d|[01]?\\d\\d?)\\.){3}(?:25[0-5]|2[0-4]\\d|[01]?\\d\\d?))|(?:(?:[0-9a-f]{1,4}:){0,5}[0-9a-f]{1,4})?::[0-9a-f]{1,4}|(?:(?:[0-9a-f]{1,4}:){0,6}[0-9a-f]{1,4})?::)|[Vv][0-9a-f]+\\.[a-z0-9\\-._~!$&'()*+,;=:]+)\\]|(?:(?:25[0-5]|2[0-4]\\d|[01]?\\d\\d?)\\.){3}(?:25[0-5]|2[0-4]\\d|[01]?\\d\\d?)|(?:[a-z0-9\\-._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\\d*)?(?:\\/(?:[a-z0-9\\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*|\\/(?:(?:[a-z0-9\\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\\/(?:[a-z0-9\\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)?|(?:[a-z0-9\\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})+(?:\\/(?:[a-z0-9\\-._~!$&'()*+,;=:@]|%[0-9a-f]{2})*)*)(?:\\?(?:[a-z0-9\\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?(?:#(?:[a-z0-9\\-._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})*)?\\Z",
    _ASCII_I,
)


def _is_leap_year(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def _date(text: str) -> bool:
    """RFC 3339 full-date with a real day of the month."""
    found = _DATE.match(text)
    if not found:
        return False
    year, month, day = (int(part) for part in found.groups())
    last = 29 if month == 2 and _is_leap_year(year) else _DAYS[month] if month <= 12 else 0
    return 1 <= month <= 12 and 1 <= day <= last


def _time_checker(strict_time_zone: bool) -> Callable[[str], bool]:
    def time(text: str) -> bool:
        found = _TIME.match(text)
        if not found:
            return False
        hour, minute, second = int(found[1]), int(found[2]), float(found[3])
        zone, sign = found[4], -1 if found[5] == "-" else 1
        zone_hour, zone_minute = int(found[6] or 0), int(found[7] or 0)
        if zone_hour > 23 or zone_minute > 59 or (strict_time_zone and not zone):
            return False
        if hour <= 23 and minute <= 59 and second < 60:
            return True
        utc_minute = minute - zone_minute * sign  # a leap second is 23:59:60 UTC
        utc_hour = hour - zone_hour * sign - (1 if utc_minute < 0 else 0)
        return utc_hour in (23, -1) and utc_minute in (59, -1) and second < 61

    return time


def _date_time_checker(strict_time_zone: bool) -> Callable[[str], bool]:
    time = _time_checker(strict_time_zone)

    def date_time(text: str) -> bool:
        parts = _DATE_TIME_SEPARATOR.split(text)
        return len(parts) == 2 and _date(parts[0]) and time(parts[1])

    return date_time


def _uri(text: str) -> bool:
    return bool(_NOT_URI_FRAGMENT.search(text)) and bool(_URI.match(text))


def _byte(text: str) -> bool:
    """ajv-formats tests its base64 expression with the `m` flag: any one line may match."""
    return any(_BYTE_LINE.fullmatch(line) for line in _LINE_TERMINATORS.split(text))


def _regex(text: str) -> bool:
    """`new RegExp(text)` compiles (without flags) and has no `\\Z` anchor."""
    if _Z_ANCHOR.search(text):
        return False
    try:
        jsengine.regex_test(text, "")
    except jsengine.JavaScriptError as exc:
        if isinstance(exc, jsengine.JavaScriptLimitError):
            raise
        return False
    return True


def _matcher(pattern: re.Pattern[str]) -> Callable[[str], bool]:
    return lambda text: bool(pattern.match(text))


def _always(_: object) -> bool:
    return True


STRING_FORMATS: dict[str, Callable[[str], bool]] = {
    "date": _date,
    "time": _time_checker(True),
    "date-time": _date_time_checker(True),
    "iso-time": _time_checker(False),
    "iso-date-time": _date_time_checker(False),
    "duration": _matcher(_DURATION),
    "uri": _uri,
    "uri-reference": _matcher(_URI_REFERENCE),
    "uri-template": _matcher(_URI_TEMPLATE),
    "url": _matcher(_URL),
    "email": _matcher(_EMAIL),
    "hostname": _matcher(_HOSTNAME),
    "ipv4": _matcher(_IPV4),
    "ipv6": _matcher(_IPV6),
    "regex": _regex,
    "uuid": _matcher(_UUID),
    "json-pointer": _matcher(_JSON_POINTER),
    "json-pointer-uri-fragment": _matcher(_JSON_POINTER_URI_FRAGMENT),
    "relative-json-pointer": _matcher(_RELATIVE_JSON_POINTER),
    "byte": _byte,
    "password": _always,
    "binary": _always,
}
"""ajv-formats' string formats: name -> whether a string conforms."""


def _is_integer(value: float) -> bool:
    return isinstance(value, int) or value.is_integer()


NUMBER_FORMATS: dict[str, Callable[[float], bool]] = {
    "int32": lambda value: _is_integer(value) and _MIN_INT32 <= value <= _MAX_INT32,
    "int64": _is_integer,
    "float": _always,
    "double": _always,
}
"""ajv-formats' number formats: name -> whether a number conforms."""

FORMAT_NAMES = frozenset(STRING_FORMATS) | frozenset(NUMBER_FORMATS)
"""Every format name Ajv knows once ajv-formats is added; any other is an unknown format."""


def conforms(name: str, value: object) -> bool:
    """Whether a JSON value conforms to format `name`, as Ajv with ajv-formats decides.

    Values of the other kind (a number for a string format, a string for `int32`, and
    booleans, nulls, arrays and objects) conform, as in Ajv.
    """
    if isinstance(value, str):
        string_check = STRING_FORMATS.get(name)
        return string_check is None or string_check(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number_check = NUMBER_FORMATS.get(name)
        return number_check is None or number_check(value)
    return True
