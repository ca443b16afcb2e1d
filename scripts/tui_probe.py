#!/usr/bin/env python3
"""Drives the real `tandem` binary in a pseudo-terminal and prints whole-process figures.

Used by scripts/bench-tui.sh; standard library only. The child gets the pty as its controlling terminal
(new session + TIOCSCTTY), TERM=xterm-256color and a 120x40 window. Its output goes through a small VT
screen model (cursor moves, erases, text; colours ignored), so "visible on screen" means what a user sees,
not bytes that happened to pass by (ratatui only rewrites the cells that changed).

The app asks the terminal about keyboard enhancement (`ESC [ ? u`) followed by primary device attributes
(`ESC [ c`) and waits for the answer. How the fake terminal answers:
  silent  answers nothing (a terminal or multiplexer that swallows queries)
  da      answers `ESC [ c` with `ESC [ ? 62 ; c` and ignores `ESC [ ? u` (xterm, VTE, most terminals)
  kitty   answers `ESC [ ? u` with `ESC [ ? 0 u`, then the device attributes (kitty-protocol terminals)
A cursor position request (`ESC [ 6 n`) is answered in every mode but silent.

Subcommands:
  scenario     writes the fake-server scenario for the turns run
  first-paint  spawn → status line on screen, N runs per answer mode: median/min/max
  idle         RSS and CPU of the idle app after first paint
  turns        types N prompts, waits for each answer; RSS after turn 10 and turn N
  big-scenario writes a scenario with one answer of N MB (one paragraph of short lines)
  big-answer   asks for that answer: RSS before, at its peak, and once the app is idle again
"""

import argparse
import codecs
import fcntl
import json
import os
import re
import select
import signal
import statistics
import struct
import subprocess
import sys
import termios
import time
import unicodedata

COLS, ROWS = 120, 40
STATUS_TEXT = "claude-sonnet-4-5"
IDLE_TEXT = "Ask tandem anything"
CLK_TCK = os.sysconf("SC_CLK_TCK")

# ---------------------------------------------------------------------------------------------- screen model

TOKEN = re.compile(
    r"\x1b\[([0-9;:?<=>!]*)[ -/]*([@-~])"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC
    r"|\x1b[P_^X][^\x1b]*\x1b\\"  # DCS, APC, PM, SOS
    r"|\x1b[()*+#%]."  # charset selection
    r"|\x1b[^\[\]P_^X()*+#%]"  # other two-byte escapes
    r"|[\x00-\x1f\x7f]"  # C0 controls
    r"|[^\x00-\x1f\x7f\x1b]+",  # text
    re.S,
)
INCOMPLETE = re.compile(
    r"\x1b(?:\[[0-9;:?<=>!]*[ -/]*|\][^\x07\x1b]*\x1b?|[P_^X][^\x1b]*\x1b?|[()*+#%])?\Z",
    re.S,
)


def char_width(ch):
    if unicodedata.combining(ch) or ch in "\u200b\u200d\ufe0f":
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


class Screen:
    """Enough of a VT100 to follow what ratatui's crossterm backend writes."""

    def __init__(self, cols, rows):
        self.cols, self.rows = cols, rows
        self.grid = [[" "] * cols for _ in range(rows)]
        self.x = self.y = 0
        self.pending = ""
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, data):
        text = self.pending + self.decoder.decode(data)
        tail = INCOMPLETE.search(text)
        if tail:
            self.pending, text = text[tail.start():], text[: tail.start()]
        else:
            self.pending = ""
        for match in TOKEN.finditer(text):
            token = match.group(0)
            if match.group(2) is not None:
                self.csi(match.group(1), match.group(2))
            elif token[0] == "\x1b":
                continue
            elif len(token) == 1 and (token < " " or token == "\x7f"):
                self.control(token)
            else:
                self.put(token)

    def control(self, ch):
        if ch == "\r":
            self.x = 0
        elif ch == "\n":
            self.y = min(self.y + 1, self.rows - 1)
        elif ch == "\b":
            self.x = max(0, self.x - 1)

    def put(self, text):
        row = self.grid[self.y]
        for ch in text:
            width = char_width(ch)
            if width == 0:
                continue
            if self.x + width > self.cols:
                break
            row[self.x] = ch
            if width == 2:
                row[self.x + 1] = ""
            self.x += width

    def csi(self, params, final):
        private = params.startswith(("?", "<", "=", ">"))
        nums = [int(p) if p.isdigit() else 0 for p in params.lstrip("?<=>!").replace(":", ";").split(";")]
        first = nums[0] if nums else 0
        if private:
            return
        if final in "Hf":
            row = nums[0] if len(nums) > 0 and nums[0] else 1
            col = nums[1] if len(nums) > 1 and nums[1] else 1
            self.y, self.x = min(row, self.rows) - 1, min(col, self.cols) - 1
        elif final == "J":
            if first == 0:
                self.erase_line(self.y, self.x, self.cols)
                for y in range(self.y + 1, self.rows):
                    self.erase_line(y, 0, self.cols)
            elif first == 1:
                for y in range(self.y):
                    self.erase_line(y, 0, self.cols)
                self.erase_line(self.y, 0, self.x + 1)
            else:
                for y in range(self.rows):
                    self.erase_line(y, 0, self.cols)
        elif final == "K":
            start, end = {0: (self.x, self.cols), 1: (0, self.x + 1)}.get(first, (0, self.cols))
            self.erase_line(self.y, start, end)
        elif final == "A":
            self.y = max(0, self.y - max(first, 1))
        elif final == "B":
            self.y = min(self.rows - 1, self.y + max(first, 1))
        elif final == "C":
            self.x = min(self.cols - 1, self.x + max(first, 1))
        elif final == "D":
            self.x = max(0, self.x - max(first, 1))
        elif final == "G":
            self.x = min(max(first, 1), self.cols) - 1
        elif final == "d":
            self.y = min(max(first, 1), self.rows) - 1

    def erase_line(self, y, start, end):
        row = self.grid[y]
        for x in range(start, min(end, self.cols)):
            row[x] = " "

    def text(self):
        return "\n".join("".join(row) for row in self.grid)


# ---------------------------------------------------------------------------------------------- the pty child


def set_controlling_tty():
    # Runs in the child after setsid() (start_new_session) and the dup2 of stdio onto the pty slave.
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Tui:
    QUERIES = (b"\x1b[?u", b"\x1b[c", b"\x1b[0c", b"\x1b[6n")

    def __init__(self, argv, env, cwd, mode):
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLS, 0, 0))
        child_env = dict(env, TERM="xterm-256color")
        child_env.pop("COLORTERM", None)
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            argv,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=child_env,
            cwd=cwd,
            start_new_session=True,
            preexec_fn=set_controlling_tty,
            close_fds=True,
        )
        os.close(slave)
        self.master = master
        self.mode = mode
        self.screen = Screen(COLS, ROWS)
        self.tail = b""
        self.bytes_out = 0
        self.first_query_at = None
        self.closed = False

    def answer_queries(self, data):
        window = self.tail + data
        # Only queries that end inside the new data (the tail was already looked at).
        for query in self.QUERIES:
            start = 0
            while True:
                at = window.find(query, start)
                if at < 0:
                    break
                start = at + 1
                if at + len(query) <= len(self.tail):
                    continue
                if self.first_query_at is None:
                    self.first_query_at = time.monotonic() - self.started
                reply = b""
                if query == b"\x1b[?u" and self.mode == "kitty":
                    reply = b"\x1b[?0u"
                elif query in (b"\x1b[c", b"\x1b[0c") and self.mode in ("da", "kitty"):
                    reply = b"\x1b[?62;c"
                elif query == b"\x1b[6n" and self.mode != "silent":
                    reply = b"\x1b[1;1R"
                if reply:
                    os.write(self.master, reply)
        self.tail = window[-8:]

    def pump(self, timeout):
        """Reads what the app wrote within `timeout` seconds; False once the pty is closed."""
        if self.closed:
            return False
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(self.master, 1 << 16)
        except OSError:
            data = b""
        if not data:
            self.closed = True
            return False
        self.bytes_out += len(data)
        self.answer_queries(data)
        self.screen.feed(data)
        return True

    def wait_for(self, predicate, timeout):
        """Pumps output until predicate(screen text) holds; returns the seconds since spawn, or None."""
        deadline = time.monotonic() + timeout
        while True:
            if predicate(self.screen.text()):
                return time.monotonic() - self.started
            left = deadline - time.monotonic()
            if left <= 0 or not self.pump(min(left, 0.05)):
                return None if not predicate(self.screen.text()) else time.monotonic() - self.started

    def drain(self, seconds):
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0 and self.pump(min(left, 0.05)):
            pass

    def type(self, text):
        os.write(self.master, text.encode())

    def close(self):
        if self.proc.poll() is None:
            try:
                self.type("\x04")  # Ctrl+D on an empty prompt quits
            except OSError:
                pass
            deadline = time.monotonic() + 3
            while self.proc.poll() is None and time.monotonic() < deadline:
                self.pump(0.05)
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(3)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        os.close(self.master)


# ---------------------------------------------------------------------------------------------- /proc


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def cpu_ns(pid):
    """On-CPU time of all the process's threads, from schedstat (ns)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as stat:
                total += int(stat.read().split()[0])
        except (OSError, ValueError):
            pass
    return total


# ---------------------------------------------------------------------------------------------- commands


def app_argv(args):
    return [args.tandem, *args.tandem_args]


def fmt_ms(seconds):
    return f"{seconds * 1000:.0f} ms"


def first_paint(args):
    print(f"first paint: spawn → '{STATUS_TEXT}' on screen ({COLS}x{ROWS} pty), {args.runs} runs per mode")
    for mode in args.modes:
        times, queries = [], []
        for _ in range(args.runs):
            tui = Tui(app_argv(args), os.environ, args.cwd, mode)
            try:
                took = tui.wait_for(lambda screen: STATUS_TEXT in screen, args.timeout)
                if took is None:
                    print(f"  {mode}: no first paint within {args.timeout} s; screen:\n{tui.screen.text()}")
                    sys.exit(1)
                times.append(took)
                if tui.first_query_at is not None:
                    queries.append(tui.first_query_at)
            finally:
                tui.close()
        query = f"; terminal query sent after {fmt_ms(statistics.median(queries))} (median)" if queries else ""
        print(
            f"  {mode:<7} median {fmt_ms(statistics.median(times))}  min {fmt_ms(min(times))}  "
            f"max {fmt_ms(max(times))}{query}"
        )


def painted_tui(args, name):
    """The app in a pty, once its first frame is on screen (exits the probe if it never comes)."""
    tui = Tui(app_argv(args), os.environ, args.cwd, "da")
    if tui.wait_for(lambda screen: STATUS_TEXT in screen, args.timeout) is None:
        print(f"{name}: no first paint; screen:\n{tui.screen.text()}")
        tui.close()
        sys.exit(1)
    return tui


def idle(args):
    tui = painted_tui(args, "idle")
    try:
        tui.drain(args.settle)
        pid = tui.proc.pid
        rss = rss_mb(pid)
        ticks0, ns0, t0, out0 = cpu_ticks(pid), cpu_ns(pid), time.monotonic(), tui.bytes_out
        tui.drain(args.window)
        ticks1, ns1, t1 = cpu_ticks(pid), cpu_ns(pid), time.monotonic()
        threads = len(os.listdir(f"/proc/{pid}/task"))
        elapsed = t1 - t0
        print(f"idle ({args.settle:.0f} s after first paint, then a {args.window:.0f} s window):")
        print(f"  RSS {rss:.1f} MB ({threads} threads)")
        print(
            f"  CPU {100 * (ns1 - ns0) / 1e9 / elapsed:.2f} % (schedstat), "
            f"{100 * (ticks1 - ticks0) / CLK_TCK / elapsed:.2f} % (/proc/PID/stat ticks); "
            f"{tui.bytes_out - out0} bytes written to the terminal meanwhile"
        )
    finally:
        tui.close()


def marker(turn):
    return f"turn-{turn:04d}-complete"


def answer_text(turn):
    """A ~1.5 KB Markdown answer whose last line is the turn's marker."""
    return (
        f"Here is what I found for request {turn}. The parser keeps the **previous** token when the input "
        "ends in a comment, so the last expression is evaluated twice and the test sees a doubled side effect.\n\n"
        "The fix drops the stale token before returning:\n\n"
        "```rust\n"
        "fn finish(&mut self) -> Result<Expr, ParseError> {\n"
        "    self.pending.take();\n"
        f"    let expr = self.parse_expr({turn})?;\n"
        "    Ok(expr)\n"
        "}\n"
        "```\n\n"
        "What changed:\n\n"
        "- `cargo test -p parser` passes again (128 tests),\n"
        f"- a regression test `trailing_comment_{turn}` covers the case,\n"
        "- nothing else calls `finish` twice, so no other behaviour moves.\n\n"
        "If you want, I can also simplify the error type next: it has grown three variants that mean the same "
        "thing, and merging them would make the match in `report.rs` about half as long. I left it alone so this "
        "change stays small and easy to review, and because the variants are part of the public interface, "
        "which deserves its own change and its own note in the changelog for the people who match on them.\n\n"
        f"{marker(turn)}"
    )


def scenario(args):
    replies = []
    for turn in range(1, args.turns + 1):
        if args.tool_every and turn % args.tool_every == 0:
            replies.append(
                {
                    "blocks": [
                        {"type": "text", "text": "Let me read the notes first.", "chunks": 7},
                        {"type": "tool_use", "name": "Read", "input": {"file_path": args.read_file}},
                    ]
                }
            )
        text = answer_text(turn)
        replies.append({"blocks": [{"type": "text", "text": text, "chunks": max(1, len(text) // 4)}]})
    json.dump({"replies": replies}, sys.stdout)


def turns(args):
    tui = painted_tui(args, "turns")
    samples = {}
    try:
        pid = tui.proc.pid
        start = time.monotonic()
        samples[0] = rss_mb(pid)
        checkpoints = {10, args.turns} | set(range(100, args.turns + 1, 100))
        for turn in range(1, args.turns + 1):
            tui.type(f"Request {turn}: fix the parser test and explain the change briefly.")
            tui.type("\r")
            done = tui.wait_for(lambda screen: marker(turn) in screen and IDLE_TEXT in screen, args.timeout)
            if done is None:
                print(f"turns: turn {turn} did not finish within {args.timeout} s; screen:\n{tui.screen.text()}")
                sys.exit(1)
            if turn in checkpoints:
                samples[turn] = rss_mb(pid)
            if time.monotonic() - start > args.budget:
                print(f"turns: stopped after turn {turn}: over the {args.budget:.0f} s budget")
                break
        elapsed = time.monotonic() - start
        cpu = cpu_ns(pid) / 1e9
        last = max(samples)
        print(f"{last} turns in {elapsed:.1f} s ({elapsed / last * 1000:.0f} ms a turn, app CPU {cpu:.1f} s in all)")
        print("  RSS by turn: " + ", ".join(f"{turn}: {mb:.1f} MB" for turn, mb in sorted(samples.items())))
        if 10 in samples:
            print(f"  RSS growth from turn 10 to turn {last}: {samples[last] - samples[10]:+.1f} MB")
        if elapsed > 180:
            print("  NOTE: the run took longer than 3 minutes")
    finally:
        tui.close()


def big_scenario(args):
    line = "The quick brown fox jumps over the lazy dog, and then some more words follow here.\n"
    text = line * (args.mb * 1_000_000 // len(line)) + marker(1)
    json.dump({"replies": [{"blocks": [{"type": "text", "text": text, "chunks": 2000}]}]}, sys.stdout)


def vm_kb(pid, field):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def big_answer(args):
    tui = painted_tui(args, "big-answer")
    try:
        tui.drain(1)
        pid = tui.proc.pid
        before = rss_mb(pid)
        start = time.monotonic()
        tui.type("Write the long answer.")
        tui.type("\r")
        if tui.wait_for(lambda screen: marker(1) in screen and IDLE_TEXT in screen, args.timeout) is None:
            print(f"big-answer: no complete answer within {args.timeout} s; screen:\n{tui.screen.text()}")
            sys.exit(1)
        took = time.monotonic() - start
        tui.drain(args.settle)
        after, peak = rss_mb(pid), vm_kb(pid, "VmHWM") / 1024
        print(f"one large answer ({COLS}x{ROWS} pty, answered and drawn in {took:.1f} s):")
        print(f"  RSS before {before:.1f} MB, peak {peak:.1f} MB, {args.settle:.0f} s after it {after:.1f} MB")
        print(f"  above the idle app: peak +{peak - before:.1f} MB, steady +{after - before:.1f} MB")
    finally:
        tui.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)

    def app_command(name):
        command = commands.add_parser(name)
        command.add_argument("--tandem", required=True, help="the tandem binary")
        command.add_argument("--cwd", default=os.getcwd(), help="the app's working directory")
        command.add_argument("--timeout", type=float, default=30, help="seconds to wait for each step")
        command.add_argument("tandem_args", nargs="*", help="arguments for tandem (after --)")
        return command

    command = app_command("first-paint")
    command.add_argument("--runs", type=int, default=20)
    command.add_argument("--modes", nargs="+", default=["da", "kitty", "silent"], choices=["da", "kitty", "silent"])
    command.set_defaults(run=first_paint)

    command = app_command("idle")
    command.add_argument("--settle", type=float, default=2)
    command.add_argument("--window", type=float, default=3)
    command.set_defaults(run=idle)

    command = app_command("turns")
    command.add_argument("--turns", type=int, default=500)
    command.add_argument("--budget", type=float, default=600, help="stop after this many seconds")
    command.set_defaults(run=turns)

    command = app_command("big-answer")
    command.add_argument("--settle", type=float, default=3, help="seconds to wait once the answer is shown")
    command.set_defaults(run=big_answer)

    command = commands.add_parser("big-scenario")
    command.add_argument("--mb", type=int, default=20)
    command.set_defaults(run=big_scenario)

    command = commands.add_parser("scenario")
    command.add_argument("--turns", type=int, default=500)
    command.add_argument("--tool-every", type=int, default=5, help="every Nth turn reads a file first (0: never)")
    command.add_argument("--read-file", required=True, help="absolute path of the file the Read calls read")
    command.set_defaults(run=scenario)

    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
