#!/bin/sh
# After the package's files are gone (dpkg: remove, purge, upgrade, ...;
# rpm: 0 when erased, 1 on an upgrade). A purge also removes what the
# mesh timer's runs kept: its spool of results the archive could not take
# yet (StateDirectory=wirespeed-mesh, under /var/lib/private with
# DynamicUser=yes); dpkg removes the configuration files itself.
set -e
case "$1" in
purge)
  rm -rf /var/lib/private/wirespeed-mesh /var/lib/wirespeed-mesh
  ;;
esac
case "$1" in
remove | purge | 0)
  if [ -d /run/systemd/system ]; then
    systemctl daemon-reload || true
  fi
  ;;
esac
exit 0
