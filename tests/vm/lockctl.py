#!/usr/bin/python3
# lockctl.py - fcntl(2) byte-range lock steps for the kernel-lock VM scenario
# (tests/vm/kernel-lock.sh). Opens FILE read-write and runs each STEP in order,
# printing one line per lock step, so two processes (two lock owners) can be
# scripted against each other:
#   ex|sh START LEN     F_SETLK: prints "ex START LEN ok" or "... denied"
#   exw|shw START LEN   F_SETLKW: prints "... ok after SECONDS"
#   un START LEN        unlock the range
#   touch PATH          create PATH (tell the other process)
#   wait PATH           wait (at most 120 s) until PATH exists
#   sleep SECONDS
import errno, fcntl, os, sys, time

def main():
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
    steps = [s.split() for s in sys.argv[2:]]
    for s in steps:
        op = s[0]
        if op in ("ex", "sh", "exw", "shw", "un"):
            start, length = int(s[1]), int(s[2])
            kind = {"e": fcntl.LOCK_EX, "s": fcntl.LOCK_SH, "u": fcntl.LOCK_UN}[op[0]]
            if op in ("ex", "sh"):
                kind |= fcntl.LOCK_NB
            t0 = time.monotonic()
            try:
                fcntl.lockf(fd, kind, length, start, os.SEEK_SET)
                res = "ok"
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                res = "denied"
            if op.endswith("w"):
                res += " after %.1f" % (time.monotonic() - t0)
            if op != "un":
                print(op, start, length, res, flush=True)
        elif op == "touch":
            open(s[1], "w").close()
        elif op == "wait":
            deadline = time.monotonic() + 120
            while not os.path.exists(s[1]):
                if time.monotonic() > deadline:
                    sys.exit("timed out waiting for " + s[1])
                time.sleep(0.05)
        elif op == "sleep":
            time.sleep(float(s[1]))
        else:
            sys.exit("unknown step " + op)

main()
