# SPDX-License-Identifier: LGPL-2.1-or-later
# pty-exports.py DIR N BUS SESSION_PATH FORMAT UID: start N ExportToFd calls (export-fd3) as UID, each
# into a pty whose output is stopped (as Ctrl-S does: a write of even one byte blocks) and whose
# master nobody reads. Writes how many calls are still waiting to DIR/pending, over and over; once
# DIR/drain exists, restarts the output, reads every master until its call has ended and writes
# each call's exit status and the bytes it got to DIR/drained. Call I's errors go to DIR/call-I.err.
import os, pty, subprocess, sys, termios, time

d, n, bus, path, fmt, uid = sys.argv[1], int(sys.argv[2]), *sys.argv[3:7]
export_fd3 = os.environ["EXPORT_FD3"]
masters, slaves, procs = [], [], []
for i in range(n):
    m, s = pty.openpty()
    os.set_blocking(m, False)
    termios.tcflow(s, termios.TCOOFF)
    def to_fd3(s=s):
        os.dup2(s, 3)
    procs.append(subprocess.Popen(
        ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", export_fd3, bus, path,
         fmt],
        preexec_fn=to_fd3, close_fds=False, stdout=subprocess.DEVNULL,
        stderr=open(os.path.join(d, f"call-{i}.err"), "w")))
    slaves.append(s)
    masters.append(m)

def note_pending():
    pending = sum(p.poll() is None for p in procs)
    with open(os.path.join(d, "pending.tmp"), "w") as f:
        f.write(f"{pending}\n")
    os.replace(os.path.join(d, "pending.tmp"), os.path.join(d, "pending"))

while not os.path.exists(os.path.join(d, "drain")):
    note_pending()
    time.sleep(0.05)

for s in slaves:
    termios.tcflow(s, termios.TCOON)
got = [0] * n
open_masters = set(range(n))
deadline = time.monotonic() + 60
while open_masters and time.monotonic() < deadline:
    for i in list(open_masters):
        try:
            data = os.read(masters[i], 65536)
        except BlockingIOError:
            data = None
        if data:
            got[i] += len(data)
        elif procs[i].poll() is not None:
            open_masters.discard(i)
    time.sleep(0.01)
with open(os.path.join(d, "drained"), "w") as f:
    for p, g in zip(procs, got):
        f.write(f"{p.wait()} {g}\n")
note_pending()
