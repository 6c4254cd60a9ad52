"""Checks the built docs site in headless Chromium: is any code block cut off at a 1280 px window?

    python3 -m hatch run docs:build
    python3 docs/_tools/layout_check.py --out /tmp/kd-layout        # index, guides, API index, Trainer
    python3 docs/_tools/layout_check.py --all                        # every page of the site (a few minutes)

For each page it loads (file:// URLs of docs/_build/html, at a 1280x900 viewport unless `--width` says
otherwise) it measures every visible code block (`pre`): cut off when its content is wider than its box
(`scrollWidth > clientWidth`), so the end of a line hides behind a scrollbar. It prints one row per page:
the blocks, the cut-off ones, the widest line in characters, how many characters fit in a block, and the
content column's width in px; then each cut-off block's widest line. Exits 1 if any block is cut off, or if
an API signature shows as raw text (`~typing.Any`, `__KEY_REQUIRED__`, a private module's path).

With `--out`, it saves viewport screenshots of the index, docs/guides/trainer and the Trainer API page there
(index.png, guide-trainer.png, api-trainer.png; `--full-page` for whole pages).

Standard library only, and a Chromium binary (`apt-get install chromium`; `--chromium` or $CHROMIUM to name
another), driven over the DevTools protocol through a pipe (`--remote-debugging-pipe`): one browser for all
pages.
"""

from __future__ import annotations

import argparse
import base64
import fcntl
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

DOCS = pathlib.Path(__file__).resolve().parents[1]
SITE = DOCS / "_build" / "html"
TRAINER_API = "api/generated/kd.train.Trainer.html"
SCREENSHOTS = {
    "index.png": "index.html",
    "guide-trainer.png": "guides/trainer.html",
    "api-trainer.png": TRAINER_API,
}
# Pages that are not documentation: highlighted module sources (viewcode), indexes, search.
NOT_PAGES = ("_modules/", "_sources/", "_static/", "genindex.html", "py-modindex.html", "search.html")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",  # without these three it waits on the network, which is closed here
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
)

# Runs in the page; resolves to what the table shows. A block's box is its clientWidth (padding included);
# a character's width is measured in the block's own font.
MEASURE = r"""
(async () => {
  // A signature Sphinx could not parse as Python is shown as raw text: `~typing.Any`, sentinel values.
  const RAW = /~[A-Za-z_]\w*\.|__KEY_REQUIRED__|\b(?:kd|konfig|kontext|ktyping|kd_compat)(?:\.\w+)*\._[a-z]\w*\./;
  await document.fonts.ready;
  const column = document.querySelector("article.bd-article") || document.querySelector("main") || document.body;
  const blocks = [...document.querySelectorAll("pre")].filter((pre) => pre.getClientRects().length > 0);
  const rows = blocks.map((pre) => {
    const lines = pre.textContent.replace(/\n$/, "").split("\n");
    const style = getComputedStyle(pre);
    const probe = document.createElement("span");
    probe.textContent = "0".repeat(100);
    probe.style.cssText = "position:absolute;visibility:hidden;white-space:pre";
    pre.appendChild(probe);
    const char = probe.getBoundingClientRect().width / 100;
    probe.remove();
    const inner = pre.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const widest = lines.reduce((a, b) => (b.length > a.length ? b : a), "");
    return {
      cut: pre.scrollWidth > pre.clientWidth + 1,
      widest: widest.length,
      line: widest,
      fits: Math.floor(inner / char),
    };
  });
  return {
    column: Math.round(column.getBoundingClientRect().width),
    blocks: rows.length,
    cut: rows.filter((r) => r.cut).map((r) => ({ widest: r.widest, line: r.line })),
    widest: Math.max(0, ...rows.map((r) => r.widest)),
    fits: rows.length ? Math.min(...rows.map((r) => r.fits)) : null,
    raw: [...document.querySelectorAll("dt.sig")]
      .map((dt) => dt.textContent.replace(/\s+/g, " ").replace("[source]", "").trim())
      .filter((text) => RAW.test(text))
      .map((text) => text.match(RAW)[0] + " in " + text.slice(0, 60)),
  };
})()
"""


class Browser:
    """One headless Chromium, spoken to over its DevTools pipe (fd 3 in, fd 4 out, messages end in NUL)."""

    def __init__(self, binary: str, width: int, height: int) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # The child's fds 3 and 4 are made by bash (dash takes one-digit fds only) from these copies, numbered
        # above anything it moves.
        child_in = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
        child_out = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
        for fd in (to_browser_r, from_browser_w):
            os.close(fd)
        self._profile = tempfile.mkdtemp(prefix="kd-layout-")
        args = [*FLAGS, f"--user-data-dir={self._profile}", f"--window-size={width},{height}", "about:blank"]
        self._process = subprocess.Popen(
            ["bash", "-c", f'exec "$0" "$@" 3<&{child_in} 4>&{child_out}', binary, *args],
            pass_fds=(child_in, child_out),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(child_in)
        os.close(child_out)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        page = next(t for t in self.send("Target.getTargets")["targetInfos"] if t["type"] == "page")
        self._session = self.send("Target.attachToTarget", targetId=page["targetId"], flatten=True)[
            "sessionId"
        ]
        self.send("Page.enable", session=True)
        self.send(
            "Emulation.setDeviceMetricsOverride",
            session=True,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )

    def _read(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed its DevTools pipe (did it start? try it by hand)")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def send(self, method: str, session: bool = False, timeout: float = 60, **params: Any) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._read(timeout)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer["result"]
            self._events.append(answer)

    def open(self, url: str, timeout: float = 60) -> None:
        self._events.clear()
        self.send("Page.navigate", session=True, url=url)
        deadline = time.monotonic() + timeout
        while not any(event.get("method") == "Page.loadEventFired" for event in self._events):
            self._events.append(self._read(deadline - time.monotonic()))

    def evaluate(self, script: str) -> Any:
        answer = self.send(
            "Runtime.evaluate", session=True, expression=script, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in answer:
            raise RuntimeError(f"the measuring script failed: {answer['exceptionDetails']}")
        return answer["result"]["value"]

    def screenshot(self, path: pathlib.Path, full_page: bool) -> None:
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            size = self.send("Page.getLayoutMetrics", session=True)["cssContentSize"]
            params.update(captureBeyondViewport=True, clip={**size, "x": 0, "y": 0, "scale": 1})
        path.write_bytes(
            base64.b64decode(self.send("Page.captureScreenshot", session=True, **params)["data"])
        )

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
        os.close(self._to_browser)
        os.close(self._from_browser)
        shutil.rmtree(self._profile, ignore_errors=True)


def pages(site: pathlib.Path, every: bool) -> list[str]:
    if every:
        found = (path.relative_to(site).as_posix() for path in site.rglob("*.html"))
        return sorted(page for page in found if not page.startswith(NOT_PAGES))
    guides = sorted(path.relative_to(site).as_posix() for path in (site / "guides").glob("*.html"))
    return ["index.html", *guides, "api/index.html", TRAINER_API]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--site", type=pathlib.Path, default=SITE, help="the built site (default: %(default)s)"
    )
    parser.add_argument(
        "--all", action="store_true", help="every page, not only the index, guides and Trainer"
    )
    parser.add_argument("--out", type=pathlib.Path, help="a folder for the screenshots")
    parser.add_argument(
        "--full-page", action="store_true", help="screenshots of whole pages, not the viewport"
    )
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=900)
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "chromium"))
    args = parser.parse_args(argv)

    binary = shutil.which(args.chromium)
    if binary is None:
        parser.error(f"no Chromium at {args.chromium!r}: apt-get install chromium, or pass --chromium")
    if not (args.site / "index.html").exists():
        parser.error(f"no built site at {args.site}: run `python3 -m hatch run docs:build` first")
    site = args.site.resolve()
    browser = Browser(binary, args.width, args.height)
    rows = []
    try:
        for page in pages(site, args.all):
            browser.open((site / page).as_uri())
            rows.append((page, browser.evaluate(MEASURE)))
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            for name, page in SCREENSHOTS.items():
                browser.open((site / page).as_uri())
                browser.evaluate("document.fonts.ready.then(() => true)")
                browser.screenshot(args.out / name, args.full_page)
    finally:
        browser.close()

    print(f"{args.width}x{args.height} viewport, {len(rows)} pages of {site}\n")
    header = ("page", "blocks", "cut off", "widest line (chars)", "fits (chars)", "column px")
    table = [
        header,
        *((page, r["blocks"], len(r["cut"]), r["widest"], r["fits"] or "", r["column"]) for page, r in rows),
    ]
    if args.all:  # a row for each page with code cut off, and a total
        table = [header, *(row for row in table[1:] if row[2])]
        table.append(
            (
                "(all pages)",
                sum(r["blocks"] for _, r in rows),
                sum(len(r["cut"]) for _, r in rows),
                "",
                "",
                "",
            )
        )
    widths = [max(len(str(row[i])) for row in table) for i in range(len(header))]
    for row in table:
        print(
            "  ".join(
                str(cell).ljust(w) if i == 0 else str(cell).rjust(w)
                for i, (cell, w) in enumerate(zip(row, widths))
            )
        )
    cut = [(page, block) for page, r in rows for block in r["cut"]]
    if cut:
        print(f"\n{len(cut)} code blocks cut off; each one's widest line:")
        for page, block in cut:
            print(f"  {page}: {block['widest']} chars: {block['line'].strip()[:100]}")
    raw = [(page, text) for page, r in rows for text in r["raw"]]
    if raw:
        print(f"\n{len(raw)} signatures shown as raw text (not parsed as Python by Sphinx):")
        for page, text in raw:
            print(f"  {page}: {text}")
    if args.out:
        print(f"\nscreenshots: {', '.join(str(args.out / name) for name in SCREENSHOTS)}")
    return 1 if cut or raw else 0


if __name__ == "__main__":
    sys.exit(main())
