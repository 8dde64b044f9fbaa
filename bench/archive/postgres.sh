#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster (Debian's postgresql package) for
# the archive benchmark and prints its URL; `postgres.sh stop DIR` stops
# it and removes it. As root the cluster runs as the postgres user. PORT
# (55433) and DB (bench) choose the port and the database made. .ci/run
# starts the tests' cluster with it too.
#
#   url=$(bench/archive/postgres.sh /tmp/wirespeed-bench-pg)
#   go run ./bench/archive -archive "$url"
#   bench/archive/postgres.sh stop /tmp/wirespeed-bench-pg
set -euo pipefail
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
[ -x "$bin/initdb" ] || { echo "needs Debian's postgresql package: apt-get install postgresql" >&2; exit 1; }
as=()
[ "$(id -u)" = 0 ] && as=(runuser -u postgres --)
if [ "${1:-}" = stop ]; then
  "${as[@]}" "$bin/pg_ctl" -D "$2/data" -m fast -w stop >/dev/null
  rm -rf "$2"
  exit 0
fi
dir=${1:?give a directory for the cluster}
port=${PORT:-55433}
mkdir -p "$dir"
[ "$(id -u)" = 0 ] && chown postgres: "$dir"
pw=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$pw" > "$dir/pw"
[ "$(id -u)" = 0 ] && chown postgres: "$dir/pw"
"${as[@]}" "$bin/initdb" -D "$dir/data" -U postgres --pwfile "$dir/pw" --auth-local=trust --auth-host=scram-sha-256 -E UTF8 >/dev/null
"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
  -o "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir" start >/dev/null
db=${DB:-bench}
"${as[@]}" "$bin/psql" -h "$dir" -p "$port" -U postgres -qc "CREATE DATABASE $db" >/dev/null
echo "postgres://postgres:$pw@127.0.0.1:$port/$db?sslmode=disable"
