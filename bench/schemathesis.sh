#!/bin/sh
# The longer schemathesis run: the test of `make test` (tests/security/test_schemathesis.py:
# in-process, as a submitter and as an operator, no 5xx and every response as documented) with
# more examples per operation. EXAMPLES=2000 bench/schemathesis.sh for a longer one still.
set -eu
cd "$(dirname "$0")/.."
GANGSCHED_SCHEMATHESIS_EXAMPLES="${EXAMPLES:-500}" GANGSCHED_TEST_DB="${GANGSCHED_TEST_DB:-test_gangsched_fuzz}" \
    exec .venv/bin/python -m pytest tests/security/test_schemathesis.py -q --timeout 3600 "$@"
