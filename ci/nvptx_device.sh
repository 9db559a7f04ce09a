#!/bin/sh
# Pack for / run on the lent NVIDIA machine: see ci/nvptx_device.py (README "nvptx-gpu on a
# lent GPU"). Here: `ci/nvptx_device.sh pack`, then `ci/nvptx_device.sh command` prints what to
# give the device tool (carry: [".device"]).
here=$(dirname "$0")
py=python3
[ -x "$here/../.venv/bin/python" ] && py="$here/../.venv/bin/python"
exec "$py" "$here/nvptx_device.py" "$@"
