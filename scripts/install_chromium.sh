#!/usr/bin/env bash
# Install Debian's chromium for the report screenshot test (tests/test_report.py renders a
# `bisvm report` HTML file headless and checks that the screenshot is not blank).
# Without chromium that test skips, saying why. Run as root or with sudo available.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install_chromium.sh: no apt-get (not Debian/Ubuntu); the screenshot test will skip" >&2
    exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q chromium
chromium --version
