"""Browser timing for the click benchmark: what a person waits for after a click, and what the
page sent.

An action (a click) is timed from the mouse event to the end of the rerun it caused, painted:

1. the server's ``script_finished`` message on the app's websocket (Streamlit's ForwardMsg,
   decoded here; a fast rerun can flip the page's script state to "running" and back within
   one React render, so the page attribute alone can miss it);
2. ``[data-testid=stApp][data-test-script-state=notRunning]`` and no section still waiting
   for its data (an element whose class starts with ``st-key-pending``: the app's
   placeholders, which a fragment replaces once the data is there);
3. every plotly chart drawn (its ``.main-svg``) and two animation frames (the browser has
   painted what it was given).

The part after the ``script_finished`` message is the *paint* time. Bytes: websocket payloads
and HTTP response bodies (Chrome DevTools' encoded lengths, e.g. a lazily loaded plotly or
deck.gl chunk) received during the action.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ui.launch import READY

FRAMES = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
PENDING = "[class*='st-key-pending']"
#: every plotly chart on the page has drawn its SVG (plotly.js is loaded lazily, then draws)
CHARTS_DRAWN = """() => [...document.querySelectorAll('[data-testid=stPlotlyChart]')]
  .every(c => c.querySelector('.main-svg'))"""
#: each WebGL canvas notes when it last drew (``__drawn``) and when the second animation frame
#: after that draw came (``__shown``): a map (deck.gl) draws some frames after the page's run has
#: ended, once its WebGL context is made (asynchronously) and its shaders are linked, and without
#: a graphics card the frame that shows the draw waits, in one long task, for the drawing done in
#: software; the frame after it comes once the draw is on screen
DRAW_HOOK = """(() => {
  window.__drawsNoted = true;
  for (const P of [window.WebGL2RenderingContext, window.WebGLRenderingContext]) {
    if (!P) continue;
    const names = ['drawArrays', 'drawElements', 'drawArraysInstanced', 'drawElementsInstanced'];
    for (const name of names) {
      const draw = P.prototype[name];
      if (!draw) continue;
      P.prototype[name] = function (...args) {
        const out = draw.apply(this, args);
        const canvas = this.canvas;
        canvas.__drawn = performance.now();
        if (!canvas.__showing) {
          canvas.__showing = true;
          requestAnimationFrame(() => requestAnimationFrame(() => {
            canvas.__showing = false;
            canvas.__shown = performance.now();
          }));
        }
        return out;
      };
    }
  }
})();"""
#: A map counts as drawn once it has drawn on its canvas and then not for this many animation
#: frames and milliseconds: deck.gl draws a map's layers as each becomes ready (its shaders
#: linked, its font atlas made), and a link blocks the page for a while without a frame, so quiet
#: time alone would take that gap for the end.
MAP_QUIET = (5, 400)
#: polled once per animation frame with ``[frames, ms, token, expected]``: ``[milliseconds since
#: the frame that showed the maps' latest draw]`` once the page shows at least ``expected`` maps
#: (a map's code loads lazily: it can be sent before it shows), every map has drawn, the frame
#: after its last draw has come, and no map has drawn for ``frames`` frames and ``ms``
#: milliseconds (``[0]`` without maps, or on a page whose draws are not noted), else null (wait)
MAPS_SETTLED = """([frames, ms, token, expected]) => {
  if (!window.__drawsNoted) return [0];  // a page loaded before it was watched
  const maps = document.querySelectorAll('[data-testid=stDeckGlJsonChart]');
  if (maps.length < expected) return null;
  if (!maps.length) return [0];
  let latest = -Infinity;
  let shown = -Infinity;
  for (const m of maps) {
    const canvases = [...m.querySelectorAll('canvas')].filter(c => c.__drawn !== undefined);
    if (!canvases.length) return null;
    for (const c of canvases) {
      if (c.__showing) return null;  // drawn, not shown yet
      latest = Math.max(latest, c.__drawn);
      shown = Math.max(shown, c.__shown);
    }
  }
  const seen = window.__mapsSeen;
  if (!seen || seen.token !== token || seen.latest !== latest) {
    window.__mapsSeen = {token, latest, frames: 0};
    return null;
  }
  seen.frames += 1;
  const now = performance.now();
  return seen.frames >= frames && now - latest >= ms ? [now - shown] : null;
}"""


@dataclass
class Wire:
    """What one browser page received: the arrival time of each ``script_finished`` message
    and the bytes of websocket frames and HTTP bodies (running totals)."""

    finished: list[float] = field(default_factory=list)
    #: arrival time of the latest message that draws a map (pydeck), sent whole or by reference
    map_sent: float = 0.0
    map_hashes: set[str] = field(default_factory=set)
    ws_bytes: int = 0
    http_bytes: int = 0

    @property
    def total(self) -> int:
        return self.ws_bytes + self.http_bytes


@dataclass
class Timing:
    """One action: seconds until painted, until the server's ``script_finished``, bytes, and the
    CPU seconds the browser's processes and the servers used meanwhile (less sensitive to the
    load of a shared machine than wall times)."""

    seconds: float
    server: float
    nbytes: int
    browser_cpu: float = 0.0
    server_cpu: float = 0.0

    @property
    def paint(self) -> float:
        return max(0.0, self.seconds - self.server)


WIRES: dict[int, Wire] = {}


def _draws_map(msg, known: set[str]) -> bool:
    """Whether ``msg`` draws a pydeck map: a new element of that type (its hash is kept in
    ``known``) or a reference to one sent before (Streamlit sends a repeated large message by
    its hash)."""
    if msg.WhichOneof("type") == "ref_hash":
        return msg.ref_hash in known
    if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
        return False
    if msg.delta.new_element.WhichOneof("type") != "deck_gl_json_chart":
        return False
    known.add(msg.hash)
    return True


def watch(page) -> Wire:
    """Start recording ``page``'s websocket messages and HTTP bodies (:class:`Wire`)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    wire = WIRES.setdefault(id(page), Wire())
    page.set_default_timeout(180_000)  # a loaded machine
    page.add_init_script(DRAW_HOOK)

    def on_frame(payload: bytes | str) -> None:
        wire.ws_bytes += len(payload)
        if isinstance(payload, bytes):
            try:
                msg = ForwardMsg.FromString(payload)
            except Exception:
                return
            kind = msg.WhichOneof("type")
            if kind == "script_finished":
                wire.finished.append(time.perf_counter())
            elif _draws_map(msg, wire.map_hashes):
                wire.map_sent = time.perf_counter()

    page.on("websocket", lambda ws: ws.on("framereceived", on_frame))
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")

    def on_loaded(event: dict) -> None:
        wire.http_bytes += int(event.get("encodedDataLength", 0))

    cdp.on("Network.loadingFinished", on_loaded)
    return wire


def cpu_seconds() -> tuple[float, float]:
    """CPU seconds (user + system) used so far by this process's chromium descendants and by
    its other descendants (the servers), without the children that already ended."""
    import psutil

    browser = servers = 0.0
    for proc in psutil.Process().children(recursive=True):
        try:
            times = proc.cpu_times()
            used = times.user + times.system
            if "chrom" in proc.name() or "headless" in proc.name():
                browser += used
            elif "node" not in proc.name():
                servers += used
        except psutil.Error:
            continue
    return browser, servers


def settle(page, start: float, timeout_ms: float = 120_000) -> float:
    """Wait until the page is ready, holds no pending section and has drawn its charts and maps;
    returns the seconds from ``start`` to the later of the page's paint and the frame that showed
    its maps' last draw."""
    page.wait_for_selector(READY, timeout=timeout_ms)
    page.wait_for_function(
        f"() => !document.querySelector({PENDING!r})", timeout=timeout_ms, polling=20
    )
    page.wait_for_function(CHARTS_DRAWN, timeout=timeout_ms, polling=20)
    page.wait_for_selector(READY, timeout=timeout_ms)
    page.evaluate(FRAMES)
    painted = time.perf_counter()
    token, expected = time.perf_counter_ns(), int(WIRES[id(page)].map_sent > start)
    ago = page.wait_for_function(
        MAPS_SETTLED, arg=[*MAP_QUIET, token, expected], timeout=timeout_ms, polling="raf"
    ).json_value()[0]
    return max(painted, time.perf_counter() - ago / 1000) - start


def timed(page, action: Callable[[], None], timeout: float = 120.0) -> Timing:
    """Run ``action`` (a click, a navigation) and wait for the rerun it caused, painted."""
    wire = WIRES[id(page)]
    n0, b0 = len(wire.finished), wire.total
    cpu0 = cpu_seconds()
    start = time.perf_counter()
    action()
    while len(wire.finished) == n0:
        if time.perf_counter() - start > timeout:
            raise SystemExit("error: an action caused no rerun within the timeout")
        page.wait_for_timeout(5)
    seconds = settle(page, start, timeout * 1000)
    # a rerun that follows within 150 ms (a placeholder's fragment, a URL fix) belongs to it
    runs = len(wire.finished)
    page.wait_for_timeout(150)
    if len(wire.finished) != runs or page.locator(READY).count() == 0:
        seconds = settle(page, start, timeout * 1000)
    cpu1 = cpu_seconds()
    return Timing(seconds, wire.finished[n0] - start, wire.total - b0,
                  cpu1[0] - cpu0[0], cpu1[1] - cpu0[1])  # fmt: skip


def open_page(page, url: str) -> Timing:
    """Load ``url`` in ``page`` (watched) and wait for its first run, painted."""
    return timed(page, lambda: page.goto(url))


def pick_option(page, scope: str, label: str, i: int) -> Callable[[], None]:
    """An action choosing another option of the selectbox labelled ``label`` in ``scope``:
    opens the list and clicks the ``i``-th (modulo their number) of the options shown whole
    in the open list, the current option skipped.

    The click is made once the option can take it: a long list (the Map's 1,000 queries) is
    drawn a window at a time around the current option, with options beyond the list's visible
    part, and for its first few hundred milliseconds the open list takes the pointer itself;
    a click then waits for Playwright's retries and scrolls (about 0.9 s) that no person waits
    for, since a person clicks an option they see."""
    box = page.locator(f"{scope} [data-testid=stSelectbox]").filter(
        has=page.get_by_text(label, exact=True)
    )
    field_ = box.first.locator("input[role=combobox]").first
    current = field_.input_value()
    field_.scroll_into_view_if_needed()
    box.first.locator("button[aria-haspopup=listbox]").first.click()
    options = page.locator("[role=listbox] [role=option]")
    options.first.wait_for(timeout=60_000)
    listed = options.evaluate_all(OPTIONS_SHOWN)
    choices = [j for j, (text, whole) in enumerate(listed) if text != current and whole] or [0]
    option = options.nth(choices[i % len(choices)])
    page.wait_for_function(TAKES_POINTER, arg=option.element_handle(), timeout=60_000)
    return option.click


#: per option of the open list, [its text, whether it lies within the list's visible part from
#: top to bottom]: one call for every option rather than a round trip each
OPTIONS_SHOWN = """opts => { const list = opts[0].closest('[role=listbox]').getBoundingClientRect();
  return opts.map(o => { const r = o.getBoundingClientRect();
    return [o.innerText.trim(), r.top >= list.top - 0.5 && r.bottom <= list.bottom + 0.5]; }); }"""
#: the element's centre hits the element (nothing drawn over it takes the pointer)
TAKES_POINTER = """o => { const r = o.getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return hit !== null && (hit === o || o.contains(hit)); }"""


def pick_radio(page, scope: str, label: str, i: int) -> Callable[[], None]:
    """An action choosing another option of the radio group labelled ``label``."""
    group = page.locator(f"{scope} [data-testid=stRadio]").filter(
        has=page.get_by_text(label, exact=True)
    )
    options = group.first.locator("[data-testid=stRadioOption]")
    count = options.count()
    checked = [j for j in range(count) if options.nth(j).get_attribute("data-selected") == "true"]
    choices = [j for j in range(count) if j not in checked] or [0]
    return options.nth(choices[i % len(choices)]).click


def pick_segment(page, scope: str, label: str, i: int) -> Callable[[], None]:
    """An action choosing another option of the segmented control labelled ``label``: the
    ``i``-th (modulo their number) of its buttons that is not the one chosen now."""
    group = page.locator(f"{scope} [data-testid=stButtonGroup]").filter(
        has=page.get_by_text(label, exact=True)
    )
    buttons = group.first.locator("button")
    chosen = buttons.evaluate_all("bs => bs.map(b => (b.dataset.testid || '').endsWith('Active'))")
    choices = [j for j, on in enumerate(chosen) if not on] or [0]
    return buttons.nth(choices[i % len(choices)]).click


def click_row(page, table_key: str, row: int) -> Callable[[], None]:
    """An action ticking the selection checkbox of ``row`` in the dataframe with ``key``."""
    grid = page.locator(f".st-key-{table_key} [data-testid=stDataFrame]")
    grid.wait_for(timeout=30_000)
    box = grid.bounding_box()
    assert box is not None
    x, y = box["x"] + 18, box["y"] + 35 + 35 * row + 17
    return lambda: page.mouse.click(x, y)


def page_link(page, label: str) -> Callable[[], None]:
    """An action clicking the sidebar link to the page labelled ``label``."""
    link = page.locator("[data-testid=stSidebar] [data-testid=stPageLink-NavLink]").filter(
        has_text=re.compile(f"^{re.escape(label)}$")
    )
    return link.first.click


def present(page, selector: str) -> bool:
    return page.locator(selector).count() > 0
