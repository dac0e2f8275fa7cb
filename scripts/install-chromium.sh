#!/usr/bin/env bash
# Install Debian's chromium for the report's browser test, only when it is missing.
# Idempotent; never uses `playwright install` (Playwright drives this binary via executable_path).
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "install-chromium: not root and no sudo; install the Debian package 'chromium'" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium
