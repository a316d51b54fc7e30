#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs a test program under onesided-run with its time limit stretched by
# ONESIDED_TEST_TIME_SCALE (default 1; the soft-RoCE VM under TCG sets 4, where one fence epoch
# over rxe takes tens of milliseconds and a busy host halves the speed again). The limit only
# catches hangs: the launcher ends a job that runs past it, naming the ranks still running.
# Usage: tests/scaled_run.sh ONESIDED_RUN SECONDS ARGS...
run="$1"
seconds="$2"
shift 2
exec "$run" --timeout "$((seconds * ${ONESIDED_TEST_TIME_SCALE:-1}))" "$@"
