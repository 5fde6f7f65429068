#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""bench-cost: what profiling costs, profd through its daemon against perf, in one run (#14).

Starts a private dbus-daemon and profd on it (state in a temporary directory), then:
- profd first, cold and warm: a session of workload-split (THREADS busy threads, HZ,
  SECONDS) as profd's first session (nothing in its state directory, no unwinder helper
  running yet), then COLD sessions each on a fresh copy of the binary (a file profd has
  never seen: its own stack copy and names to learn, while the system libraries are
  known; --cold-workload: copies of another program), then WARM more on fresh processes
  of the first binary; CPU is
  what profd and its unwinder helpers used from the session's start until it is
  completed (sampling, unwinding, the files written at finish), divided by the samples
  the session kept. profd runs in a cgroup of its own (cgroup v2 cpu.stat usage_usec:
  microseconds, every thread and child process included, also those that ended); without
  cgroup v2, from /proc/PID/stat of profd and its live children (clock ticks: too coarse
  for short warm sessions);
- start-up: profd's own work before any session (the kernel's symbols; the inflated copy
  of the C library's separate debug file, made at nice 19) is waited for and printed apart:
  "first session (fresh state)" is the first after start; "first at once after install"
  (--installs) is a session started as soon as profd answers on an empty state directory,
  the start-up work still running and counted in it;
- restart: profd stopped (SIGTERM) and started again on the same state directory, one
  session of the same binary: the cold figure after a restart (--restarts times, with a
  baseline each of its restarts beside one of the build under test); each round also
  has a warm session of the same daemon just before its restart, and the ratio of the
  two is printed per round (the goal: within 1.5x in every round), with the unwinder's
  CPU and profd's own of both;
- perf, the pinned reference: `perf record -F HZ --call-graph dwarf -p PID -o FILE --
  sleep SECONDS` then `perf report -i FILE --stdio`, CPU from rusage, divided by the
  samples perf wrote (`perf report --stats`); LOST records are its dropped samples;
- ratios profd/perf, dropped samples of each;
- target slowdown: workload-fixed-work (a fixed amount of work on THREADS threads,
  reporting its own wall and CPU time) alone, under a profd session and under `perf
  record -F HZ --call-graph dwarf`, runs interleaved, medians;
- scaling: profd's warm CPU per sample with 1, 8 and 64 busy threads, each against perf's
  on the same shape in the same run;
- with --long SECONDS: one session that long, the RSS of profd and its helpers every
  --long-interval seconds (30), and how much it grew after the first minute;
- with --separation N: what the sandboxed unwinder costs per sample against the in-process
  path, N rounds interleaved, each on fresh processes of workload-split, SECONDS long, both
  warm and copying the same stack bytes (what profd learned the binary needs): a session of
  the process through profd (unwound by root's helper; its CPU split into the helper's,
  /proc/PID/schedstat of the single-threaded helper, and profd's own, its cgroup less the
  helper's) and root's session of a cgroup holding only such a process (the same Collector,
  unwound inside profd with its own warm symbol cache); medians of the rounds.
  (`profctl --local` is the other in-process path, but it starts cold every time: its
  start-up and symbol loading vary by more than the whole per-sample cost under load.)
- with --baseline-profd PATH: the same first, cold and warm sessions through another profd build
  (e.g. main before a change) in the same run, each warm session beside one of the build
  under test, so that both see the same load.
Every profd row says the stack copy its sessions made (adaptive stack copy: the first
session of a binary copies 16 KiB, the next ones what the first needed).
Prints a table; exit status 0 unless something failed to run.
"""
import argparse
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

CLK_TCK = os.sysconf('SC_CLK_TCK')
DEST = 'org.profd.Profiler1'
MGR_PATH = '/org/profd/Profiler1'
MGR = 'org.profd.Profiler1.Manager'
SES = 'org.profd.Profiler1.Session'


def fail(msg):
    print('FAIL: ' + msg, file=sys.stderr)
    sys.exit(1)


def cgroup2_root():
    """Where cgroup v2 is mounted (None without it)."""
    with open('/proc/self/mounts') as f:
        for line in f:
            fields = line.split()
            if fields[2] == 'cgroup2':
                return fields[1]
    return None


class Daemon:
    """dbus-daemon on a private socket and profd on it."""

    def __init__(self, profd, tmp, config):
        self.profd_bin = profd
        self.tmp = tmp
        root = cgroup2_root()
        self.cgroup = None
        if root:
            self.cgroup = os.path.join(root, os.path.basename(tmp))
            os.mkdir(self.cgroup)
        self.address = 'unix:path=%s/bus' % tmp
        with open(os.path.join(tmp, 'bus.conf'), 'w') as f:
            f.write('''<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
''' % self.address)
        with open(os.path.join(tmp, 'profd.conf'), 'w') as f:
            f.write(config)
        self.bus = subprocess.Popen(['dbus-daemon', '--config-file=%s/bus.conf' % tmp, '--nofork'],
                                    stderr=subprocess.DEVNULL)
        for _ in range(100):
            if os.path.exists(os.path.join(tmp, 'bus')):
                break
            time.sleep(0.05)
        self.profd = None
        self.log = open(os.path.join(tmp, 'profd.log'), 'a')

    def start_profd(self, settle=True):
        """Start profd and wait until it answers and (settle) its start-up work is over (its
        CPU stays still for 0.2 s and the inflated copies of debug files it queued are made);
        the CPU that start-up took (seconds)."""
        cpu0 = self.cpu() if self.cgroup else 0
        log_start = os.path.getsize(os.path.join(self.tmp, 'profd.log'))
        self.profd = subprocess.Popen(
            [self.profd_bin, '--address=' + self.address, '--state-dir=%s/state' % self.tmp,
             '--config=%s/profd.conf' % self.tmp], stderr=self.log)
        if self.cgroup:
            with open(os.path.join(self.cgroup, 'cgroup.procs'), 'w') as f:
                f.write(str(self.profd.pid))
        for _ in range(400):
            if self.busctl('get-property', DEST, MGR_PATH, MGR, 'Version', check=False):
                break
            if self.profd.poll() is not None:
                with open(os.path.join(self.tmp, 'profd.log')) as f:
                    fail('profd exited during start-up: ' + f.read()[-2000:])
            time.sleep(0.05)
        else:
            fail('profd did not come up on the bus')
        if not settle:
            return self.cpu() - cpu0
        # what it does once at start (reading the kernel's symbols, inflating the C library's
        # debug file at nice 19) is not a session's cost
        for _ in range(1200):
            with open(os.path.join(self.tmp, 'profd.log')) as f:
                f.seek(log_start)
                log = f.read()
            if log.count('making an inflated copy') <= (log.count('made an inflated copy') +
                                                        log.count('cannot make an inflated')):
                break
            time.sleep(0.05)
        prev = self.cpu()
        for _ in range(100):
            time.sleep(0.2)
            now = self.cpu()
            if now - prev < 0.0005:
                break
            prev = now
        return now - cpu0

    def stop_profd(self):
        self.profd.send_signal(signal.SIGTERM)
        self.profd.wait()
        self.profd = None

    def close(self):
        if self.profd:
            self.profd.kill()
            self.profd.wait()
        self.bus.kill()
        self.bus.wait()
        if self.cgroup:
            # the helpers die with profd (PDEATHSIG), a moment after it
            for _ in range(100):
                with open(os.path.join(self.cgroup, 'cgroup.procs')) as f:
                    if not f.read().strip():
                        break
                time.sleep(0.05)
            os.rmdir(self.cgroup)

    def busctl(self, *args, check=True):
        r = subprocess.run(['busctl', '--address=' + self.address, '--json=short'] + list(args),
                           capture_output=True, text=True)
        if r.returncode != 0:
            if check:
                fail('busctl %s: %s' % (' '.join(args), r.stderr.strip()))
            return None
        return json.loads(r.stdout) if r.stdout.strip() else {}

    def children(self):
        """profd's live child processes (its unwinder helpers)."""
        kids = []
        for tid in os.listdir('/proc/%d/task' % self.profd.pid):
            try:
                with open('/proc/%d/task/%s/children' % (self.profd.pid, tid)) as f:
                    kids += [int(x) for x in f.read().split()]
            except OSError:
                pass  # a thread that just ended
        return kids

    def cpu(self):
        """CPU seconds of profd and its helpers so far: profd's own, its reaped children's,
        and its live children's (the per-uid unwinder helpers live across sessions)."""
        if self.cgroup:
            with open(os.path.join(self.cgroup, 'cpu.stat')) as f:
                return int(re.search(r'usage_usec (\d+)', f.read()).group(1)) / 1e6
        total = 0
        for pid in [self.profd.pid] + self.children():
            try:
                with open('/proc/%d/stat' % pid) as f:
                    fields = f.read().rsplit(')', 1)[1].split()
            except OSError:
                continue  # a helper that exited since: its CPU is in profd's cutime now
            # fields[11..14] are utime, stime, cutime, cstime (stat fields 14-17)
            total += sum(int(x) for x in fields[11:15])
        return total / CLK_TCK

    def rss_kib(self):
        """Resident memory of profd and its helpers (KiB): VmRSS, and its private anonymous
        part (heap and anonymous maps: RssAnon) and shared part (RssFile, RssShmem: the
        program files and libraries, and memfds profd and an unwinder both map, counted in
        each)."""
        total = {'rss': 0, 'anon': 0, 'shared': 0}
        for pid in [self.profd.pid] + self.children():
            try:
                with open('/proc/%d/status' % pid) as f:
                    status = f.read()
            except OSError:
                continue
            field = lambda name: int(re.search(name + r':\s+(\d+)', status).group(1))
            total['rss'] += field('VmRSS')
            total['anon'] += field('RssAnon')
            total['shared'] += field('RssFile') + field('RssShmem')
        return total

    def session(self, pid, hz, usec, timeout, options=('0',)):
        """Start a session on pid (options: StartSession's a{sv} as busctl arguments), wait
        until completed; its path, samples, dropped, metrics."""
        out = self.busctl('call', DEST, MGR_PATH, MGR, 'StartSession', 'uuta{sv}', str(pid),
                          str(hz), str(usec), *options)
        path = out['data'][1]
        deadline = time.monotonic() + timeout
        # every call costs profd CPU too: no polling before the window is over
        time.sleep(usec / 1e6)
        while True:
            state = self.busctl('get-property', DEST, path, SES, 'State')['data']
            if state in ('completed', 'failed'):
                break
            if time.monotonic() > deadline:
                fail('session %s still %s after %d s' % (path, state, timeout))
            time.sleep(0.05)
        if state != 'completed':
            fail('session %s failed: %s' % (path, self.busctl('get-property', DEST, path, SES,
                                                               'Error')['data']))
        samples = self.busctl('get-property', DEST, path, SES, 'SamplesCaptured')['data']
        dropped = self.busctl('get-property', DEST, path, SES, 'SamplesDropped')['data']
        metrics = json.loads(self.busctl('call', DEST, path, SES, 'GetMetrics')['data'][0])
        self.busctl('call', DEST, path, SES, 'Release')
        return path, samples, dropped, metrics


def spawn(argv, held=False):
    """Start argv; held: stopped before exec until go() (so a profiler can attach first)."""
    if not held:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        time.sleep(0.05)  # past the dynamic loader
        return p, None
    r, w = os.pipe()
    # a shell that execs argv once told to (Popen itself waits for the exec: a preexec_fn
    # that blocked would block it too); the pid stays the same across the exec
    p = subprocess.Popen(['/bin/sh', '-c', 'read go <&%d; exec "$@"' % r, 'sh'] + argv,
                         stdout=subprocess.PIPE, text=True, pass_fds=(r,))
    os.close(r)
    return p, w


def go(w):
    os.write(w, b'x\n')
    os.close(w)


def profd_session(d, workload, threads, seconds, hz):
    p, _ = spawn([workload, str(seconds + 30), str(threads)])
    cpu0 = d.cpu()
    path, samples, dropped, metrics = d.session(p.pid, hz, int(seconds * 1e6), seconds * 20 + 60)
    cpu = d.cpu() - cpu0
    p.kill()
    p.wait()
    if samples == 0:
        fail('a session of %s kept no samples' % workload)
    return {'cpu': cpu, 'samples': samples, 'dropped': dropped, 'copy': metrics['stack_bytes'],
            'us': cpu / samples * 1e6, 'collector_us': metrics['collector_cpu_nanos'] / samples / 1e3}


def session_cost_fit(sessions):
    """CPU of a session as fixed + per_sample x samples, least squares over 'sessions' (of
    one daemon, warm): (fixed seconds, seconds per sample), None when the samples kept do not
    vary. At a load that gives the workload a varying part of its CPUs, sessions of the same
    length keep from a few hundred to thousands of samples, and the fixed part (the perf
    events of every thread opened and closed, the finish) divided by them moves the CPU per
    sample of two warm sessions by more than the goal's 1.5x."""
    n = len(sessions)
    xs = [s['samples'] for s in sessions]
    ys = [s['cpu'] for s in sessions]
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if n < 3 or sxx == 0:
        return None
    per_sample = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - per_sample * mx, per_sample


def helpers_cpu(d):
    """CPU seconds of profd's live unwinder helpers so far (each single-threaded: the
    nanoseconds of /proc/PID/schedstat)."""
    total = 0
    for pid in d.children():
        try:
            with open('/proc/%d/schedstat' % pid) as f:
                total += int(f.read().split()[0])
        except OSError:
            pass  # one that exited since
    return total / 1e9


def separated_session(d, workload, threads, seconds, hz):
    """A session through profd: its CPU split into the helpers' and profd's own."""
    helpers0 = helpers_cpu(d)
    r = profd_session(d, workload, threads, seconds, hz)
    r['helper'] = helpers_cpu(d) - helpers0
    r['profd'] = r['cpu'] - r['helper']
    return r


def inprocess_session(d, workload, threads, seconds, hz, copy):
    """Root's session of a cgroup holding only a fresh process of workload: unwound inside
    profd (root's multi-process sessions are), copying 'copy' bytes of stack per sample."""
    cg = os.path.join(cgroup2_root(), os.path.basename(d.tmp) + '-target')
    os.mkdir(cg)
    try:
        p, _ = spawn([workload, str(seconds + 30), str(threads)])
        with open(os.path.join(cg, 'cgroup.procs'), 'w') as f:
            f.write(str(p.pid))
        helpers0 = helpers_cpu(d)
        cpu0 = d.cpu()
        _, samples, dropped, metrics = d.session(
            0, hz, int(seconds * 1e6), seconds * 20 + 60,
            ['2', 'cgroup', 's', cg, 'stack_bytes', 'u', str(copy)])
        cpu = d.cpu() - cpu0
        helper = helpers_cpu(d) - helpers0
        p.kill()
        p.wait()
    finally:
        for _ in range(100):
            try:
                os.rmdir(cg)
                break
            except OSError:
                time.sleep(0.05)  # its process not gone from it yet
    if samples == 0:
        fail('the in-process session kept no samples')
    return {'cpu': cpu, 'helper': helper, 'samples': samples, 'dropped': dropped,
            'copy': metrics['stack_bytes'], 'backend': metrics['backend'],
            'us': cpu / samples * 1e6}


def separation(d, workload, threads, seconds, hz, rounds):
    """The sandboxed unwinder against the in-process path, interleaved (see the top)."""
    # the helper up, the binary warm in it and its stack copy learned; profd's own cache warm
    copy = separated_session(d, workload, threads, 1, hz)['copy']
    inprocess_session(d, workload, threads, 1, hz, copy)
    rows = []
    for _ in range(rounds):
        sep = separated_session(d, workload, threads, seconds, hz)
        inp = inprocess_session(d, workload, threads, seconds, hz, copy)
        if sep['copy'] != copy or inp['copy'] != copy or inp['backend'] != 'perf-dwarf':
            fail('not the same sampling: profd copied %d B, in-process %d B (%s), not %d B' % (
                sep['copy'], inp['copy'], inp['backend'], copy))
        if inp['helper'] > 0.001:
            fail('an unwinder helper ran %.1f ms during the in-process session' % (
                inp['helper'] * 1e3))
        rows.append({'profd': sep['profd'] / sep['samples'] * 1e6,
                     'helper': sep['helper'] / sep['samples'] * 1e6, 'separated': sep['us'],
                     'inprocess': inp['us'], 'samples': (sep['samples'], inp['samples']),
                     'dropped': (sep['dropped'], inp['dropped']), 'copy': copy})
    return rows


def cold_session(d, workload, threads, seconds, hz, n):
    """A session on a fresh copy of workload (a new file: never seen by profd)."""
    copy = os.path.join(d.tmp, 'cold-%d-%s' % (n, os.path.basename(workload)))
    shutil.copy(workload, copy)
    try:
        return profd_session(d, copy, threads, seconds, hz)
    finally:
        os.unlink(copy)


def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def perf_stats(perf, data):
    out = subprocess.run([perf, 'report', '-i', data, '--stats'], capture_output=True,
                         text=True).stdout
    def count(name):
        m = re.search(r'^\s*%s events:\s+(\d+)' % name, out, re.M)
        return int(m.group(1)) if m else 0
    lost = count('LOST_SAMPLES') or count('LOST')
    return count('SAMPLE'), lost


def perf_session(perf, workload, threads, seconds, hz, tmp):
    data = os.path.join(tmp, 'perf.data')
    p, _ = spawn([workload, str(seconds + 30), str(threads)])
    cpu0 = children_cpu()
    subprocess.run([perf, 'record', '-q', '-F', str(hz), '--call-graph', 'dwarf', '-p', str(p.pid),
                    '-o', data, '--', 'sleep', str(seconds)],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    cpu1 = children_cpu()
    subprocess.run([perf, 'report', '-i', data, '--stdio'], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    cpu2 = children_cpu()
    p.kill()  # reaped after the measurement: its CPU is not perf's
    p.wait()
    samples, lost = perf_stats(perf, data)
    os.unlink(data)
    if samples == 0:
        fail('perf recorded no samples')
    return {'record_us': (cpu1 - cpu0) / samples * 1e6, 'report_us': (cpu2 - cpu1) / samples * 1e6,
            'us': (cpu2 - cpu0) / samples * 1e6, 'samples': samples, 'dropped': lost}


def fixed_work_times(p):
    out, _ = p.communicate()
    wall, cpu = (int(x) for x in out.split())
    return wall / 1e9, cpu / 1e9


def slowdown(d, perf, fixed_work, millions, threads, hz, runs, tmp):
    argv = [fixed_work, str(millions), str(threads)]
    times = {'alone': [], 'profd': [], 'perf': []}
    for _ in range(runs):
        p, _ = spawn(argv)
        times['alone'].append(fixed_work_times(p))

        p, w = spawn(argv, held=True)
        out = d.busctl('call', DEST, MGR_PATH, MGR, 'StartSession', 'uuta{sv}', str(p.pid),
                       str(hz), str(600 * 10**6), '0')
        go(w)
        times['profd'].append(fixed_work_times(p))
        path = out['data'][1]
        for _ in range(3000):
            if d.busctl('get-property', DEST, path, SES, 'State')['data'] in ('completed', 'failed'):
                break
            time.sleep(0.02)
        d.busctl('call', DEST, path, SES, 'Release')

        p = subprocess.Popen([perf, 'record', '-q', '-F', str(hz), '--call-graph', 'dwarf', '-o',
                              os.path.join(tmp, 'slow.data'), '--'] + argv,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        times['perf'].append(fixed_work_times(p))
    return {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
            for k, v in times.items()}


def long_session(d, workload, threads, seconds, hz, interval):
    p, _ = spawn([workload, str(seconds + 30), str(threads)])
    out = d.busctl('call', DEST, MGR_PATH, MGR, 'StartSession', 'uuta{sv}', str(p.pid), str(hz),
                   str(int(seconds * 1e6)), '0')
    path = out['data'][1]
    start = time.monotonic()
    rss = []
    cpu0 = d.cpu()
    while d.busctl('get-property', DEST, path, SES, 'State')['data'] == 'sampling':
        rss.append((time.monotonic() - start, d.rss_kib(),
                    d.busctl('get-property', DEST, path, SES, 'SamplesCaptured')['data']))
        time.sleep(interval)
    while d.busctl('get-property', DEST, path, SES, 'State')['data'] == 'resolving':
        time.sleep(0.1)
    cpu = d.cpu() - cpu0
    samples = d.busctl('get-property', DEST, path, SES, 'SamplesCaptured')['data']
    dropped = d.busctl('get-property', DEST, path, SES, 'SamplesDropped')['data']
    d.busctl('call', DEST, path, SES, 'Release')
    p.kill()
    p.wait()
    return rss, samples, dropped, cpu


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--profd', required=True)
    ap.add_argument('--workload-split', required=True)
    ap.add_argument('--fixed-work', required=True)
    ap.add_argument('--perf', default='/usr/bin/perf')
    ap.add_argument('--hz', type=int, default=999)
    ap.add_argument('--seconds', type=float, default=4)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--cold', type=int, default=3)
    ap.add_argument('--cold-workload', help='the program the cold sessions run copies of '
                    '(default: workload-split; it gets SECONDS+30 and THREADS as arguments)')
    ap.add_argument('--warm', type=int, default=3)
    ap.add_argument('--restarts', type=int, default=1)
    ap.add_argument('--installs', type=int, default=1, help='sessions each started at once on '
                    'a restarted profd with an empty state directory')
    ap.add_argument('--slowdown-runs', type=int, default=3, help='0: no slowdown runs')
    ap.add_argument('--fixed-work-millions', type=int, default=150)
    ap.add_argument('--scaling', default='1,8,64')
    ap.add_argument('--long', type=float, default=0)
    ap.add_argument('--long-interval', type=float, default=30)
    ap.add_argument('--baseline-profd')
    ap.add_argument('--separation', type=int, default=0)
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix='profd-bench-cost.')
    base_tmp = None
    # the helpers stay between sessions (--separation reads their CPU across a local run)
    config = 'MaxDurationSec=%d\nUnwinderIdleSec=600\n' % max(600, int(a.long) + 60)
    d = Daemon(a.profd, tmp, config)
    base = None
    try:
        startup = d.start_profd()
        if a.baseline_profd:
            base_tmp = tempfile.mkdtemp(prefix='profd-bench-cost-baseline.')
            base = Daemon(a.baseline_profd, base_tmp, config)
            base.start_profd()
        print('load average at start: %s; profd CPU from %s' % (
            open('/proc/loadavg').read().split()[0],
            'its cgroup' if d.cgroup else '/proc/PID/stat (clock ticks)'))
        first = profd_session(d, a.workload_split, a.threads, a.seconds, a.hz)
        base_first = base and profd_session(base, a.workload_split, a.threads, a.seconds, a.hz)
        cold, base_cold = [], []
        cold_workload = a.cold_workload or a.workload_split
        for i in range(a.cold):
            cold.append(cold_session(d, cold_workload, a.threads, a.seconds, a.hz, i))
            if base:
                base_cold.append(cold_session(base, cold_workload, a.threads, a.seconds, a.hz,
                                              i))
        warm, base_warm = [], []
        for _ in range(a.warm):
            warm.append(profd_session(d, a.workload_split, a.threads, a.seconds, a.hz))
            if base:
                base_warm.append(profd_session(base, a.workload_split, a.threads, a.seconds,
                                               a.hz))
        perf = perf_session(a.perf, a.workload_split, a.threads, a.seconds, a.hz, tmp)
        # each restart beside a warm session of the same daemon just before it (same load);
        # the unwinder's part of each apart (a restarted one starts in its session)
        restarts, base_restarts, before, base_before = [], [], [], []
        for _ in range(a.restarts):
            before.append(separated_session(d, a.workload_split, a.threads, a.seconds, a.hz))
            d.stop_profd()
            restartup = d.start_profd()
            restarts.append(separated_session(d, a.workload_split, a.threads, a.seconds, a.hz))
            if base:
                base_before.append(profd_session(base, a.workload_split, a.threads, a.seconds,
                                                 a.hz))
                base.stop_profd()
                base.start_profd()
                base_restarts.append(profd_session(base, a.workload_split, a.threads, a.seconds,
                                                   a.hz))
        # as after an install: an empty state directory and a session at once, while profd
        # still makes its start-up copies (their CPU counts in the session's)
        installs = []
        for _ in range(a.installs):
            d.stop_profd()
            shutil.rmtree(os.path.join(tmp, 'state'))
            d.start_profd(settle=False)
            installs.append(profd_session(d, a.workload_split, a.threads, a.seconds, a.hz))
        if base:
            base.close()
            base = None
        restart_us = restarts and statistics.median(r['us'] for r in restarts)
        warm_us = statistics.median(w['us'] for w in warm)
        cold_us = cold and statistics.median(c['us'] for c in cold)

        print('\n%d busy threads, %d Hz, %.0f s sessions' % (a.threads, a.hz, a.seconds))
        print('%-34s %10s %9s %8s %8s %12s %7s' % ('', 'CPU/sample', 'vs perf', 'samples',
                                                   'dropped', 'collector', 'copy'))
        rows = [('profd first session (fresh state)', first)]
        rows += [('profd first at once after install', r) for r in installs]
        rows += [('profd after restart %d' % (i + 1), r) for i, r in enumerate(restarts)]
        rows += [('profd warm before restart %d' % (i + 1), r) for i, r in enumerate(before)]
        rows += [('profd cold %d (never-seen copy)' % (i + 1), c) for i, c in enumerate(cold)]
        rows += [('profd warm %d' % (i + 1), w) for i, w in enumerate(warm)]
        if base_first:
            rows += [('baseline first session', base_first)]
            rows += [('baseline after restart %d' % (i + 1), r) for i, r in enumerate(base_restarts)]
            rows += [('baseline cold %d' % (i + 1), c) for i, c in enumerate(base_cold)]
            rows += [('baseline warm %d' % (i + 1), w) for i, w in enumerate(base_warm)]
        for name, r in rows:
            print('%-34s %8.1f us %9.3f %8d %8d %9.1f us %7d' % (
                name, r['us'], r['us'] / perf['us'], r['samples'], r['dropped'], r['collector_us'],
                r['copy']))
        if cold:
            print('%-34s %8.1f us %9.3f' % ('profd cold, median', cold_us, cold_us / perf['us']))
        print('%-34s %8.1f us %9.3f' % ('profd warm, median', warm_us, warm_us / perf['us']))
        if restarts:
            print('%-34s %8.1f us %9.3f' % ('profd after restart, median', restart_us,
                                            restart_us / perf['us']))
        if base_cold:
            base_us = statistics.median(c['us'] for c in base_cold)
            print('%-34s %8.1f us %9.3f' % ('baseline cold, median', base_us, base_us / perf['us']))
        if base_warm:
            base_us = statistics.median(w['us'] for w in base_warm)
            print('%-34s %8.1f us %9.3f' % ('baseline warm, median', base_us, base_us / perf['us']))
        print('%-34s %8.1f us %9s %8d %8d' % ('perf record + report', perf['us'], '1',
                                              perf['samples'], perf['dropped']))
        print('%-34s %8.1f us' % ('  perf record', perf['record_us']))
        print('%-34s %8.1f us' % ('  perf report', perf['report_us']))
        print('profd collector (drain + unwind threads) per sample: first %.1f us, warm %.1f us'
              % (first['collector_us'], statistics.median(w['collector_us'] for w in warm)))
        if restarts:
            print('restart cold / warm = %.2f (medians)' % (restart_us / warm_us))
        if base_restarts and base_warm:
            print('baseline restart cold / warm = %.2f (medians)' % (
                statistics.median(r['us'] for r in base_restarts) /
                statistics.median(w['us'] for w in base_warm)))
        if restarts:
            print('restart / the warm session just before it, per round: %s (highest %.2f)' % (
                ', '.join('%.2f' % (r['us'] / w['us']) for r, w in zip(restarts, before)),
                max(r['us'] / w['us'] for r, w in zip(restarts, before))))
            print('  the unwinder per session, warm before / restarted (ms): %s' % ', '.join(
                '%.1f/%.1f' % (w['helper'] * 1e3, r['helper'] * 1e3)
                for r, w in zip(restarts, before)))
            print('  profd itself per session, warm before / restarted (ms): %s' % ', '.join(
                '%.1f/%.1f' % (w['profd'] * 1e3, r['profd'] * 1e3)
                for r, w in zip(restarts, before)))
            # at a load that gives the workload less CPU, a session keeps fewer samples and
            # its fixed part (events opened and closed, the finish) weighs more in each
            print('  samples kept, warm before / restarted: %s' % ', '.join(
                '%d/%d' % (w['samples'], r['samples']) for r, w in zip(restarts, before)))
            fit = session_cost_fit(warm + before)
            if fit:
                fixed, per_sample = fit
                print('  warm sessions of this run: %.1f ms + %.2f us a sample kept; a restart\'s '
                      'CPU over what a warm session keeping its samples takes, per round: %s '
                      '(ms: %s)' % (
                          fixed * 1e3, per_sample * 1e6,
                          ', '.join('%.2f' % (r['cpu'] / (fixed + per_sample * r['samples']))
                                    for r in restarts),
                          ', '.join('%+.1f' % ((r['cpu'] - fixed - per_sample * r['samples']) * 1e3)
                                    for r in restarts)))
        if base_restarts:
            print('baseline restart / the warm session just before it, per round: %s '
                  '(highest %.2f)' % (
                      ', '.join('%.2f' % (r['us'] / w['us'])
                                for r, w in zip(base_restarts, base_before)),
                      max(r['us'] / w['us'] for r, w in zip(base_restarts, base_before))))
        # the same fit for each daemon over all its warm sessions: what a session costs
        # whatever its samples (events, rings, backlog pages, files, messages), and per sample
        for name, sessions in (('profd', warm + before), ('baseline', base_warm + base_before)):
            fit = session_cost_fit(sessions)
            if fit:
                print('%s warm sessions (%d): %.1f ms a session + %.2f us a sample kept' % (
                    name, len(sessions), fit[0] * 1e3, fit[1] * 1e6))
        print('profd start-up CPU (once, before any session): first start %.1f ms%s' % (
            startup * 1e3, ', restart %.1f ms' % (restartup * 1e3) if restarts else ''))

        if a.separation:
            rows = separation(d, a.workload_split, a.threads, a.seconds, a.hz, a.separation)
            print('\nseparation: CPU per sample, warm, %.0f s sessions, %d B stack copies: a '
                  'process through profd and its unwinder helper, and a cgroup of one such '
                  'process unwound inside profd' % (a.seconds, rows[0]['copy']))
            print('%-6s %9s %9s %11s %11s %7s %15s %9s' % (
                'round', 'profd', 'helper', 'separated', 'in-process', 'ratio', 'samples s/i',
                'dropped'))
            for i, r in enumerate(rows):
                print('%-6d %6.1f us %6.1f us %8.1f us %8.1f us %7.2f %7d/%-7d %4d/%d' % (
                    i + 1, r['profd'], r['helper'], r['separated'], r['inprocess'],
                    r['separated'] / r['inprocess'], r['samples'][0], r['samples'][1],
                    r['dropped'][0], r['dropped'][1]))
            med = {k: statistics.median(r[k] for r in rows)
                   for k in ('profd', 'helper', 'separated', 'inprocess')}
            print('median: profd %.1f + helper %.1f = %.1f us per sample separated, %.1f us '
                  'in-process: ratio %.2f (median of the rounds\' ratios %.2f)' % (
                      med['profd'], med['helper'], med['separated'], med['inprocess'],
                      med['separated'] / med['inprocess'],
                      statistics.median(r['separated'] / r['inprocess'] for r in rows)))

        if a.slowdown_runs:
            s = slowdown(d, a.perf, a.fixed_work, a.fixed_work_millions, a.threads, a.hz,
                         a.slowdown_runs, tmp)
            print('\ntarget slowdown (workload-fixed-work %d %d, median of %d)' %
                  (a.fixed_work_millions, a.threads, a.slowdown_runs))
            for k in ('alone', 'profd', 'perf'):
                w, c = s[k]
                print('%-34s wall %.3f s (x%.3f), CPU %.3f s (x%.3f)' %
                      (k, w, w / s['alone'][0], c, c / s['alone'][1]))

        if a.scaling:
            print('\nscaling (profd warm against perf, %.0f s sessions; load average %s)' %
                  (a.seconds, open('/proc/loadavg').read().split()[0]))
        for t in (int(x) for x in a.scaling.split(',') if x):
            profd_session(d, a.workload_split, t, 1, a.hz)  # the binary warm at this shape
            r = profd_session(d, a.workload_split, t, a.seconds, a.hz)
            pr = perf_session(a.perf, a.workload_split, t, a.seconds, a.hz, tmp)
            print('%3d threads: profd %6.1f us/sample (%.3f of perf), %d samples, %d dropped, '
                  'copy %d; perf %6.1f us/sample, %d samples, %d lost' %
                  (t, r['us'], r['us'] / pr['us'], r['samples'], r['dropped'], r['copy'],
                   pr['us'], pr['samples'], pr['dropped']))

        if a.long:
            rss, samples, dropped, cpu = long_session(d, a.workload_split, a.threads, a.long,
                                                      a.hz, a.long_interval)
            print('\n%.0f s session, %d threads: %d samples, %d dropped, %.1f us/sample '
                  '(load average %s at the end); RSS of profd and its helpers:' %
                  (a.long, a.threads, samples, dropped, cpu / max(samples, 1) * 1e6,
                   open('/proc/loadavg').read().split()[0]))
            print('  %7s %8s %10s %10s %10s' % ('time', 'samples', 'RSS', 'anonymous', 'shared'))
            for t, kib, n in rss:
                print('  %5.0f s %8d %6.1f MiB %6.1f MiB %6.1f MiB' % (
                    t, n, kib['rss'] / 1024, kib['anon'] / 1024, kib['shared'] / 1024))
            after = [(kib, n) for t, kib, n in rss if t >= 60]
            if len(after) > 1:
                (kib0, n0), (kib1, n1) = after[0], after[-1]
                # the profile the unwinder builds keeps every sample (16 B: its time, thread
                # and stack), as the timeline exports need: that part grows with the samples
                print('after the first minute: RSS %.1f -> %.1f MiB (+%.1f), anonymous +%.1f MiB '
                      '(%.1f B per sample kept since), shared +%.1f MiB' % (
                          kib0['rss'] / 1024, kib1['rss'] / 1024,
                          (kib1['rss'] - kib0['rss']) / 1024,
                          (kib1['anon'] - kib0['anon']) / 1024,
                          (kib1['anon'] - kib0['anon']) * 1024 / max(n1 - n0, 1),
                          (kib1['shared'] - kib0['shared']) / 1024))
    finally:
        if base:
            base.close()
        d.close()
        subprocess.run(['rm', '-rf', tmp] + ([base_tmp] if base_tmp else []))


if __name__ == '__main__':
    main()
