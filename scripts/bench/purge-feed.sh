#!/usr/bin/env bash
# Purges under write load: ACCOUNTS deleted accounts (~23 events each) purged by one
# worker, then by two, while 4 writers append single events and a consumer follows the global
# feed; the figure is the longest gap the consumer sees between two deliveries (a purge's
# transaction holds every consumer back while it runs). Release build, private cluster with
# default durability.
#
#   scripts/bench/purge-feed.sh [ACCOUNTS] [FEED_WRITERS]
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/bench/setup.sh
accounts="${1:-1000}"
writers="${2:-4}"
trap stop_cluster EXIT
bench_start
export LOG_LEVEL=warning
for workers in 1 2; do
  "$bench" purge --accounts "$accounts" --workers "$workers" --feed-writers "$writers"
done
