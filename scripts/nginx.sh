#!/usr/bin/env bash
# Installs nginx from the system packages if it is missing (the scale-out tests run their own
# instance with a configuration derived from deploy/nginx.conf).
#
#   scripts/nginx.sh --install
set -euo pipefail
case "${1:---install}" in
  --install)
    if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
      sudo=""
      [ "$(id -u)" -eq 0 ] || sudo="sudo"
      $sudo apt-get update -qq >/dev/null
      DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq nginx-light >/dev/null
    fi
    { command -v nginx || echo /usr/sbin/nginx; } | head -1
    ;;
  *)
    echo "usage: scripts/nginx.sh --install" >&2
    exit 2
    ;;
esac
