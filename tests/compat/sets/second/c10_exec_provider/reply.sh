#!/bin/sh
# $1 = prompt, $2 = options json, $3 = context json
case "$1" in
  multi*) printf 'line one\nline two\n\n' ;;
  json*) printf '{"ok": true, "n": 3}' ;;
  fail*) echo "bad things" >&2; exit 3 ;;
  stderr*) echo "warn" >&2; printf 'fine' ;;
  emoji*) printf '✅ done 🎉' ;;
  *) printf '%s' "$1" ;;
esac
