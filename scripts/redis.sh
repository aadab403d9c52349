#!/usr/bin/env bash
# Installs redis-server from the system packages if it is missing, then starts a throwaway
# instance on 127.0.0.1 (no persistence) and prints its URL on stdout.
#
#   scripts/redis.sh             # install if needed, start on a free port, print redis://127.0.0.1:PORT
#   scripts/redis.sh --install   # install only
#   scripts/redis.sh --stop PORT # stop the instance on PORT
#
# The Redis store's tests (cargo test -p talaria-redis) start their own instances with the
# installed binary; CI runs `scripts/redis.sh --install` first.
set -euo pipefail

install() {
  command -v redis-server >/dev/null 2>&1 && return 0
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-server >/dev/null
  # Debian starts a system instance on 6379; the tests use their own ports, so leave it.
  command -v redis-server >/dev/null 2>&1 || { echo "redis.sh: redis-server did not install" >&2; exit 1; }
}

case "${1:-}" in
  --install)
    install
    redis-server --version
    ;;
  --stop)
    redis-cli -p "${2:?port}" shutdown nosave >/dev/null 2>&1 || true
    ;;
  *)
    install
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes \
      --logfile "/tmp/talaria-redis-$port.log" >/dev/null
    for _ in $(seq 50); do
      redis-cli -p "$port" ping >/dev/null 2>&1 && { echo "redis://127.0.0.1:$port"; exit 0; }
      sleep 0.1
    done
    echo "redis.sh: redis-server did not start on $port (log: /tmp/talaria-redis-$port.log)" >&2
    exit 1
    ;;
esac
