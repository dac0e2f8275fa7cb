#!/usr/bin/env bash
# Install Debian's pdflatex (texlive-latex-base + -recommended, which has booktabs) for the
# paper-export compile test, only when it is missing. Idempotent; no recommends (~17 packages).
set -euo pipefail
if command -v pdflatex >/dev/null 2>&1; then
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "install-texlive: not root and no sudo; install texlive-latex-recommended" >&2
        exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends texlive-latex-base texlive-latex-recommended
