#!/bin/bash
# The example Prometheus configuration and alert rules of docs/prometheus/ are
# valid (promtool check) and the alerts fire exactly when they must (promtool's
# unit tests in tests/tools/prometheus_rules.test.yml). promtool comes with
# Debian's prometheus package (scripts/install-deps): without it the test fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
docs=$here/../../docs/prometheus
command -v promtool >/dev/null || { echo "promtool not found (apt-get install prometheus; scripts/install-deps)" >&2; exit 1; }
promtool check rules "$docs/vaaid-alerts.yml"
promtool check config "$docs/vaaid-scrape.yml"
cd "$here" && promtool test rules prometheus_rules.test.yml
