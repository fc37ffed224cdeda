#!/bin/sh
# Starts the Custodia bundle from wherever it is installed (the `custodia` command of
# INSTALL.md is a symlink to this file). A UTF-8 locale is set when the session names none;
# everything else (data dir, models, configuration) is the app's own business.
set -e
here=$(dirname "$(readlink -f "$0")")
if [ -z "${LC_ALL:-}" ] && [ -z "${LANG:-}" ]; then
    export LANG=C.UTF-8
fi
export ANONYMIZED_TELEMETRY="${ANONYMIZED_TELEMETRY:-False}"
exec "$here/custodia" "$@"
