#!/bin/sh
# After the package's files are in place (dpkg: configure; rpm: 1 on an
# install, 2 on an upgrade). The units are not enabled here: see
# docs/packaging.md. Units the administrator runs are restarted on an
# upgrade, so that they run the new binary.
set -e
if [ -d /run/systemd/system ]; then
  systemctl daemon-reload || true
  upgrade=
  case "$1" in
  configure) [ -n "${2:-}" ] && upgrade=1 ;;
  2) upgrade=1 ;;
  esac
  if [ -n "$upgrade" ]; then
    systemctl try-restart wirespeed.service wirespeed-exporter.service || true
  fi
fi
exit 0
