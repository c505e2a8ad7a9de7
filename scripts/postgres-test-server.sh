#!/usr/bin/env bash
# A throwaway PostgreSQL for Rein's tests and benchmarks: Debian's server binaries, a data directory in a
# temporary folder, owned and run by an unprivileged user, listening on a free loopback port.
#
#   scripts/postgres-test-server.sh start     # prints `export REIN_TEST_POSTGRES_URL=…` lines to eval
#   scripts/postgres-test-server.sh restart   # fast restart of the running server (same port and data)
#   scripts/postgres-test-server.sh halt      # stops the server, keeping its data (`revive` starts it again)
#   scripts/postgres-test-server.sh stop      # stops the server and removes its data
#
# State lives in $REIN_TEST_POSTGRES_DIR (default /tmp/rein-postgres-test); run `start` once, then use the
# printed URL. Installs the `postgresql` package with apt-get when no initdb is found (root only).
set -euo pipefail

state="${REIN_TEST_POSTGRES_DIR:-/tmp/rein-postgres-test}"
user_name="rein"
password="rein-test-password"
database="rein"

find_bin() {
  local found
  found="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
  if [[ -n "$found" && -x "$found/initdb" ]]; then
    echo "$found"
    return 0
  fi
  return 1
}

# Runs a command as the unprivileged owner of the data directory (ourselves when not root).
as_owner() {
  if [[ "$(id -u)" == "0" ]]; then
    runuser -u "$(cat "$state/owner")" -- "$@"
  else
    "$@"
  fi
}

start() {
  if [[ -f "$state/port" ]] && as_owner "$(cat "$state/bin")/pg_ctl" -D "$state/data" status >/dev/null 2>&1; then
    print_env
    return 0
  fi
  local bin
  if ! bin="$(find_bin)"; then
    if [[ "$(id -u)" != "0" ]]; then
      echo "postgres-test-server: no /usr/lib/postgresql/*/bin/initdb; install the postgresql package" >&2
      exit 1
    fi
    echo "postgres-test-server: installing postgresql with apt-get" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq postgresql >/dev/null
    bin="$(find_bin)"
  fi
  rm -rf "$state"
  mkdir -p "$state"
  echo "$bin" >"$state/bin"
  local owner
  owner="$(id -un)"
  if [[ "$(id -u)" == "0" ]]; then
    owner="postgres"
    if ! id "$owner" >/dev/null 2>&1; then
      owner="rein-postgres"
      id "$owner" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$owner"
    fi
    chown "$owner" "$state"
  fi
  echo "$owner" >"$state/owner"
  printf '%s\n' "$password" >"$state/password"
  [[ "$(id -u)" == "0" ]] && chown "$owner" "$state/password"
  chmod 600 "$state/password"
  as_owner "$bin/initdb" -D "$state/data" -U "$user_name" --pwfile="$state/password" \
    --auth=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >"$state/initdb.log" 2>&1 || {
    cat "$state/initdb.log" >&2
    exit 1
  }
  local port
  port="$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
  echo "$port" >"$state/port"
  # Sockets go in the state directory (not /var/run/postgresql, which may not exist or be writable).
  as_owner "$bin/pg_ctl" -D "$state/data" -l "$state/server.log" -w -t 60 \
    -o "-p $port -h 127.0.0.1 -k $state -c fsync=on -c max_connections=300" start >/dev/null || {
    cat "$state/server.log" >&2
    exit 1
  }
  PGPASSWORD="$password" "$bin/createdb" -h 127.0.0.1 -p "$port" -U "$user_name" "$database"
  print_env
}

print_env() {
  local port
  port="$(cat "$state/port")"
  echo "export REIN_TEST_POSTGRES_URL=postgres://$user_name:$password@127.0.0.1:$port/$database"
  echo "export REIN_TEST_POSTGRES_DIR=$state"
}

server_ctl() {
  local port
  port="$(cat "$state/port")"
  as_owner "$(cat "$state/bin")/pg_ctl" -D "$state/data" -l "$state/server.log" -w -t 60 -m fast \
    -o "-p $port -h 127.0.0.1 -k $state -c fsync=on -c max_connections=300" "$1" >/dev/null
}

stop() {
  if [[ -f "$state/bin" && -d "$state/data" ]]; then
    as_owner "$(cat "$state/bin")/pg_ctl" -D "$state/data" -w -t 60 -m fast stop >/dev/null 2>&1 || true
  fi
  rm -rf "$state"
}

case "${1:-}" in
  start) start ;;
  restart) server_ctl restart ;;
  halt) server_ctl stop ;;
  revive) server_ctl start ;;
  stop) stop ;;
  *)
    echo "usage: $0 start|restart|halt|revive|stop" >&2
    exit 2
    ;;
esac
