#!/bin/sh
# Before the package's files go (dpkg: remove, or upgrade; rpm: 0 when
# erased, 1 on an upgrade). On removal the units are stopped and
# disabled, so that no symlink in /etc/systemd/system names a unit that
# is gone.
set -e
case "$1" in
remove | 0)
  units="wirespeed.service wirespeed-exporter.service wirespeed-mesh.timer wirespeed-mesh.service"
  if command -v systemctl >/dev/null 2>&1; then
    if [ -d /run/systemd/system ]; then
      # shellcheck disable=SC2086 # one word per unit
      systemctl stop $units || true
    fi
    # shellcheck disable=SC2086
    systemctl --no-reload disable $units >/dev/null 2>&1 || true
  fi
  ;;
esac
exit 0
