"""Where a running server's time goes while bench/load.py drives it: what its PostgreSQL sessions
are doing, and which processes use the CPU.

    python bench/pg_waits.py DATABASE [--seconds 30] [--every 0.1]

Run beside a load (bench/README.md, *load.py*). Every ``--every`` seconds it reads
``pg_stat_activity`` for the sessions of ``DATABASE`` that are not idle and counts them by wait
event, state and the first words of their statement; at the end it prints, per kind, how many
sessions were in it on average (``idle in transaction`` with ``ClientRead``: PostgreSQL waits
for the client, here the web process, to send its next statement; ``COMMIT`` waiting on
``Lock:object`` or ``IO:WALSync``: the commit queue and the disk), then the share of a CPU each
process (by command line; PostgreSQL's backends together) used meanwhile, from ``/proc``, and
for the web processes (uvicorn's workers) how it split between their event loops (each
process's main thread: the answers from memory) and their other threads (Django's). Linux only;
nothing is written.
"""

from __future__ import annotations

import argparse
import collections
import os
import time

import psycopg

QUERY = """
SELECT coalesce(wait_event_type, 'CPU') || ':' || coalesce(wait_event, '-') || '  ' || state
       || '  ' || left(query, 40)
  FROM pg_stat_activity
 WHERE datname = %s AND pid <> pg_backend_pid() AND state <> 'idle'
"""


def cpu_seconds() -> dict[str, tuple[str, float]]:
    """Per process id: its command line and the CPU seconds it used so far."""
    tick = os.sysconf("SC_CLK_TCK")
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as stat, open(f"/proc/{pid}/cmdline") as cmdline:
                fields, command = stat.read().rsplit(")", 1)[1].split(), cmdline.read()
        except OSError:  # exited meanwhile
            continue
        command = command.replace("\0", " ").strip()[:80]
        found[pid] = (command, (int(fields[11]) + int(fields[12])) / tick)
    return found


def web_threads() -> dict[tuple[str, str], float]:
    """Per (web process id, thread id): the CPU seconds the thread used so far."""
    tick = os.sysconf("SC_CLK_TCK")
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline") as cmdline:
                if "spawn_main" not in cmdline.read():  # uvicorn's worker processes
                    continue
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
                found[(pid, tid)] = (int(fields[11]) + int(fields[12])) / tick
        except OSError:  # exited meanwhile
            continue
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("database")
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--every", type=float, default=0.1)
    parser.add_argument("--dsn", default="host=127.0.0.1 user=postgres", help="where to connect (libpq)")
    args = parser.parse_args()
    kinds, samples = collections.Counter(), 0
    before, threads_before, started = cpu_seconds(), web_threads(), time.monotonic()
    with psycopg.connect(f"{args.dsn} dbname={args.database}", autocommit=True) as conn:
        while time.monotonic() - started < args.seconds:
            kinds.update(row[0] for row in conn.execute(QUERY, (args.database,)))
            samples += 1
            time.sleep(args.every)
    elapsed, after, threads_after = time.monotonic() - started, cpu_seconds(), web_threads()
    print(f"{samples} samples of {args.database}'s busy sessions; average sessions per kind:")
    for kind, count in kinds.most_common(20):
        print(f"{count / samples:7.2f}  {kind}")
    used = collections.Counter()
    for pid, (command, seconds) in after.items():
        spent = seconds - before.get(pid, (command, 0.0))[1]
        if spent > 0:
            used["postgres (all backends)" if command.startswith("postgres") else command] += spent
    print(f"CPU over {elapsed:.0f} s (100% = one core):")
    for command, seconds in used.most_common(12):
        print(f"{seconds / elapsed * 100:6.1f}%  {command}")
    loops = others = 0.0
    for (pid, tid), seconds in threads_after.items():
        spent = seconds - threads_before.get((pid, tid), seconds)
        loops, others = (loops + spent, others) if pid == tid else (loops, others + spent)
    share = 100 / elapsed
    print(f"web processes: event loops {loops * share:.1f}%, other threads {others * share:.1f}%")


if __name__ == "__main__":
    main()
