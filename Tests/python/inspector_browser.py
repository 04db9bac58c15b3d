#!/usr/bin/env python3
"""The inspector in a real browser: headless Chromium driven by Selenium and chromedriver.

    inspector_browser.py URL [SCREENSHOT_DIR]
    inspector_browser.py --in-app URL [SCREENSHOT_DIR]
    inspector_browser.py --large URL RARE
    inspector_browser.py --follow URL
    inspector_browser.py --marks ENCRYPTED_URL KEY_ID DAMAGED_URL BAD_SEQ

Screenshots are saved only when SCREENSHOT_DIR is given.

URL is a running `serve` of a ledger log (typed, so states show) of 24 entries: a deposit, an
opening, 20 transfers, an undo and a restore. For the live step the script prints
`live: waiting` and the test, in its own process, sends a deposit of 500 to donald through the
ledger's store. Prints one `ok: …` line per step and exits 0, or names the step that failed and
exits 1.

With --in-app, URL (with its ?token=) is the inspector a test serves from a live ledger store in its
own process, with the undo, redo and restore buttons on: the script clicks Undo, then Restore on
entry 2, and sees each new entry appear in the list.

With --large, URL serves a log too long for the browser's element heights (the list's scroll bar
maps proportionally) whose only entries of type `rare` are the comma-separated RARE: the script
scrolls to the end and sees the last entry whole, filters by `rare` (a sparse filter: the list
must go on searching by itself), changes the filter while it searches, then prints
`live: waiting` with *follow newest* on; the test appends one entry, which must show whole.

With --follow, URL serves a log longer than the view: *follow newest* on, `live: waiting`, and the
entry the test then appends must show whole at the bottom of the list.

With --marks, ENCRYPTED_URL serves an encrypted log without its key (KEY_ID its key's id) and
DAMAGED_URL a log whose entry BAD_SEQ was changed in the file: the list and the detail pane mark
the encrypted entries with their key id and the entry the verification names.
"""
import json
import os
import sys
import tempfile
import time
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait


def api(base, path):
    with urllib.request.urlopen(base + path, timeout=10) as response:
        return json.load(response)


def browser():
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    options.add_argument("--headless=new")
    # CI runs as root, and Chromium's sandbox refuses to start as root: this test alone turns it
    # off. The page it loads is the project's own, served on loopback.
    options.add_argument("--no-sandbox")
    options.add_argument("--disable-gpu")
    options.add_argument("--disable-dev-shm-usage")
    options.add_argument("--window-size=1500,900")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def shoot(driver, shots, name):
    if shots:
        driver.save_screenshot(os.path.join(shots, name))


def failed(driver, error):
    failure = os.path.join(tempfile.gettempdir(), "inspector-failure.png")
    driver.save_screenshot(failure)
    print(f"failed: {error!r} (screenshot: {failure})")
    return 1


def in_app(page, shots):
    base = page.split("?")[0].rstrip("/")
    query = "?" + page.split("?", 1)[1] if "?" in page else ""
    driver = browser()
    wait = WebDriverWait(driver, 20)
    try:
        last = api(base, "/api/info" + query)["last"]
        driver.get(page)
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#rows .row[data-seq]")) >= last)
        undo = driver.find_element(By.ID, "undo-button")
        wait.until(lambda d: undo.is_displayed() and undo.is_enabled())
        undo.click()
        wait.until(lambda d: f"undone: entry {last + 1}" in d.find_element(By.ID, "status").text)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, f'#rows .row[data-seq="{last + 1}"]'))
        print(f"ok: Undo made entry {last + 1}, which shows in the list", flush=True)

        driver.find_element(By.CSS_SELECTOR, '#rows .row[data-seq="2"]').click()
        wait.until(lambda d: "Entry 2" in d.find_element(By.ID, "detail").text)
        driver.find_element(By.ID, "restore-button").click()
        wait.until(lambda d: f"restored to entry 2: entry {last + 2}" in d.find_element(By.ID, "status").text)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, f'#rows .row[data-seq="{last + 2}"]'))
        shoot(driver, shots, "in-app.png")
        print(f"ok: Restore to entry 2 made entry {last + 2}", flush=True)
    except Exception as error:  # noqa: BLE001 - the step's failure is the test's answer
        return failed(driver, error)
    finally:
        driver.quit()
    return 0


# The position of a row in the list's visible area: how far its top is below the area's top and
# its bottom above the area's bottom (both >= 0 when the whole row shows), or None when the row
# is not drawn.
ROW_IN_VIEW = """
const list = document.getElementById("entries");
const row = document.querySelector('#rows .row[data-seq="' + arguments[0] + '"]');
if (!row) return null;
const area = list.getBoundingClientRect(), box = row.getBoundingClientRect();
const top = area.top + list.clientTop;
return { top: box.top - top, bottom: top + list.clientHeight - box.bottom };
"""


def whole(driver, seq):
    place = driver.execute_script(ROW_IN_VIEW, seq)
    return place is not None and place["top"] >= -0.5 and place["bottom"] >= -0.5


def wait_whole(driver, seq, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if whole(driver, seq):
            return
        time.sleep(0.1)
    place = driver.execute_script(ROW_IN_VIEW, seq)
    raise AssertionError(f"{what}: entry {seq} does not show whole in the list (row at {place})")


def footer(driver):
    return driver.find_element(By.ID, "list-footer").text


def apply_type(driver, name):
    field = driver.find_element(By.ID, "filter-type")
    field.clear()
    field.send_keys(name)
    driver.find_element(By.ID, "apply").click()


def requests_with(driver, text):
    return driver.execute_script(
        "return performance.getEntriesByType('resource').filter((e) => e.name.includes(arguments[0])).length;", text)


def not_multiple_of_row(driver):
    """Sizes the window so that the list's height is not a whole number of rows (24 px): the
    last row must then be placed exactly, not merely in a view of whole rows."""
    height = driver.execute_script("return document.getElementById('entries').clientHeight;")
    if height % 24 == 0:
        size = driver.get_window_size()
        driver.set_window_size(size["width"], size["height"] + 10)
        height = driver.execute_script("return document.getElementById('entries').clientHeight;")
    assert height % 24 != 0, f"the list is {height} px high"
    return height


def steps(driver, *named):
    """Runs each (name, step) in turn, each whether or not the one before passed, so that one run
    reports every step that fails; returns the exit status."""
    failures = 0
    for name, run in named:
        try:
            run()
        except Exception as error:  # noqa: BLE001 - the step's failure is the test's answer
            failures += 1
            failure = os.path.join(tempfile.gettempdir(), f"inspector-failure-{failures}.png")
            driver.save_screenshot(failure)
            print(f"failed: {name}: {error!r} (screenshot: {failure})", flush=True)
    return 1 if failures else 0


def rows(driver):
    return [int(r.get_attribute("data-seq")) for r in driver.find_elements(By.CSS_SELECTOR, "#rows .row[data-seq]")]


def large(url, rare):
    driver = browser()
    wait = WebDriverWait(driver, 30)
    last = api(url, "/api/info")["last"]
    want = f"{len(rare)} matching entries"

    def scroll_to_end():
        driver.get(url + "/")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '#rows .row[data-seq="1"]'))
        height = not_multiple_of_row(driver)
        # The end of the scroll range shows the last entry whole, at the bottom.
        driver.execute_script("const l = document.getElementById('entries'); l.scrollTop = l.scrollHeight;")
        wait_whole(driver, last, 20, "scrolled to the end")
        driver.execute_script("const l = document.getElementById('entries'); l.scrollTop = l.scrollHeight;")
        time.sleep(0.5)
        wait_whole(driver, last, 5, "scrolled to the end again")
        print(f"ok: scrolled to the end of {last:,} entries, entry {last} shows whole ({height} px list)", flush=True)

    def sparse_filter():
        # No page of the first scans holds a match, so nothing on screen scrolls: the list goes on
        # searching by itself, showing how far it got, until it found them all.
        driver.get(url + "/")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '#rows .row[data-seq="1"]'))
        progress = []
        apply_type(driver, "rare")
        deadline = time.monotonic() + 120
        while footer(driver) != want:
            text = footer(driver)
            if "searched" in text and text not in progress:
                progress.append(text)
            assert time.monotonic() < deadline, f"the sparse filter stalls: the footer says {text!r}"
            time.sleep(0.05)
        assert rows(driver) == rare, f"the filtered list shows {rows(driver)}, not {rare}"
        assert progress, "the search showed no progress"
        print(f"ok: a sparse filter finds entries {rare} by itself, showing its progress ({progress[0]!r})", flush=True)

    def another_filter():
        # Another filter while a search runs: the old search stops and leaves nothing behind.
        driver.get(url + "/")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '#rows .row[data-seq="1"]'))
        apply_type(driver, "nothing-has-this-type")
        wait.until(lambda d: "searched" in footer(d))
        driver.find_element(By.ID, "clear").click()
        wait.until(lambda d: footer(d) == f"{last:,} entries")
        time.sleep(1.5)
        before = requests_with(driver, "nothing-has-this-type")
        time.sleep(2)
        assert requests_with(driver, "nothing-has-this-type") == before, "the search went on after the filter was cleared"
        assert footer(driver) == f"{last:,} entries", f"the footer says {footer(driver)!r}"
        apply_type(driver, "nothing-has-this-type")
        wait.until(lambda d: "searched" in footer(d))
        apply_type(driver, "rare")
        wait.until(lambda d: footer(d) == want)
        assert rows(driver) == rare, f"after changing the filter mid-search the list shows {rows(driver)}"
        print("ok: changing or clearing the filter stops the search it replaces", flush=True)

    def follow_newest():
        # Follow newest at the end of a proportional list.
        driver.get(url + "/")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '#rows .row[data-seq="1"]'))
        wait.until(lambda d: footer(d) == f"{last:,} entries")
        driver.find_element(By.ID, "follow").click()
        print("live: waiting", flush=True)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, f'#rows .row[data-seq="{last + 1}"]'))
        wait_whole(driver, last + 1, 10, "following the newest")
        print(f"ok: following the newest, entry {last + 1} shows whole", flush=True)

    try:
        return steps(
            driver, ("scrolling to the end", scroll_to_end), ("a sparse filter", sparse_filter),
            ("another filter", another_filter), ("following the newest", follow_newest))
    finally:
        driver.quit()


def follow(url):
    driver = browser()
    wait = WebDriverWait(driver, 30)

    def follow_newest():
        last = api(url, "/api/info")["last"]
        driver.get(url + "/")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '#rows .row[data-seq="1"]'))
        not_multiple_of_row(driver)
        wait.until(lambda d: footer(d) == f"{last:,} entries")
        driver.find_element(By.ID, "follow").click()
        print("live: waiting", flush=True)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, f'#rows .row[data-seq="{last + 1}"]'))
        wait_whole(driver, last + 1, 10, "following the newest")
        wait.until(lambda d: f"Entry {last + 1}" in d.find_element(By.ID, "detail").text)
        print(f"ok: following the newest, entry {last + 1} shows whole at the bottom", flush=True)

    try:
        return steps(driver, ("following the newest", follow_newest))
    finally:
        driver.quit()


def marks(encrypted, key_id, damaged, bad):
    driver = browser()
    wait = WebDriverWait(driver, 30)

    def encrypted_entries():
        count = api(encrypted, "/api/info")["count"]
        # The charts are drawn on canvases: record the text drawn, to read the types chart's labels.
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
            window.drawnTexts = [];
            const fillText = CanvasRenderingContext2D.prototype.fillText;
            CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
              window.drawnTexts.push(String(text));
              return fillText.call(this, text, ...rest);
            };"""})
        driver.get(encrypted + "/")
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#rows .row[data-seq]")) >= count)
        label = f"encrypted (key {key_id})"
        cells = [r.find_element(By.CSS_SELECTOR, ".type").text for r in driver.find_elements(By.CSS_SELECTOR, "#rows .row[data-seq]")]
        assert cells and all(label in c for c in cells), f"the type cells say {cells}, not {label!r}"
        driver.find_element(By.CSS_SELECTOR, '#rows .row[data-seq="2"]').click()
        wait.until(lambda d: "Entry 2" in d.find_element(By.ID, "detail").text)
        fields = driver.find_element(By.CSS_SELECTOR, "#detail dl").text
        assert label in fields, f"the detail's fields say {fields!r}"
        bar = f"{label} ({count})"
        wait.until(lambda d: bar in d.execute_script("return window.drawnTexts;"))
        print(f"ok: the encrypted entries are marked {label!r} in the list, the detail and the types chart", flush=True)

    def flagged_entry():
        driver.get(damaged + f"/#seq={bad}")
        wait.until(lambda d: "chain damaged" in d.find_element(By.ID, "verify").text)
        flagged = f'#rows .row.flagged[data-seq="{bad}"]'
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, flagged))
        marked = [r.get_attribute("data-seq") for r in driver.find_elements(By.CSS_SELECTOR, "#rows .row.flagged")]
        assert marked == [str(bad)], f"the flagged rows are {marked}"
        row = driver.find_element(By.CSS_SELECTOR, flagged)
        assert "verification" in row.text, f"row {bad} says {row.text!r}"
        wait.until(lambda d: "hash mismatch" in d.find_element(By.ID, "detail").text)
        print(f"ok: entry {bad}, named by the verification, is marked in the list and its detail", flush=True)

    try:
        return steps(driver, ("encrypted entries", encrypted_entries), ("a flagged entry", flagged_entry))
    finally:
        driver.quit()


def hold(url):
    """Opens the page, waits until its live stream is open, says so, and waits (at most 60 s)
    until the page notices that the server went away."""
    driver = browser()
    try:
        driver.get(url + "/")
        WebDriverWait(driver, 30).until(lambda d: d.find_element(By.ID, "status").text == "live")
        print("holding: the page's live stream is open", flush=True)
        WebDriverWait(driver, 60).until(lambda d: "reconnecting" in d.find_element(By.ID, "status").text)
        print("ok: the page saw the server go", flush=True)
    except Exception as error:  # noqa: BLE001 - the step's failure is the test's answer
        return failed(driver, error)
    finally:
        driver.quit()
    return 0


def main():
    if sys.argv[1] == "--hold":
        return hold(sys.argv[2].rstrip("/"))
    if sys.argv[1] == "--in-app":
        return in_app(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    if sys.argv[1] == "--large":
        return large(sys.argv[2].rstrip("/"), [int(s) for s in sys.argv[3].split(",")])
    if sys.argv[1] == "--follow":
        return follow(sys.argv[2].rstrip("/"))
    if sys.argv[1] == "--marks":
        return marks(sys.argv[2].rstrip("/"), sys.argv[3], sys.argv[4].rstrip("/"), int(sys.argv[5]))
    url = sys.argv[1].rstrip("/")
    shots = sys.argv[2] if len(sys.argv) > 2 else None
    driver = browser()
    wait = WebDriverWait(driver, 20)
    try:
        expected = api(url, "/api/entries?limit=30")["entries"]
        assert len(expected) == 24, f"the fixture log has {len(expected)} entries, not 24"

        # The right entries, in order, with their types.
        driver.get(url + "/")
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#rows .row[data-seq]")) >= 24)
        rows = driver.find_elements(By.CSS_SELECTOR, "#rows .row[data-seq]")
        seen = [(int(r.get_attribute("data-seq")), r.find_element(By.CSS_SELECTOR, ".type").text) for r in rows]
        want = [(e["seq"], e["jump"]["summary"] if "jump" in e else e["typeName"]) for e in expected]
        assert [s for s, _ in seen[:24]] == [s for s, _ in want], f"rows {seen[:24]}"
        for (seq, text), (_, name) in zip(seen, want):
            assert text.startswith(name.replace("→ ", "")) or name in text, f"row {seq} shows {text!r}, not {name!r}"
        assert "1…24" in driver.find_element(By.ID, "log-range").text
        wait.until(lambda d: "chain intact" in d.find_element(By.ID, "verify").text)
        print("ok: the list shows the 24 entries and the chain verifies", flush=True)

        # Loading the page logs no error (a missing favicon was one).
        errors = [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
        assert not errors, f"the console shows errors: {errors}"
        print("ok: the page loads with no console error")

        # Click entry 3 (the first transfer): its payload, the state after it, the diff.
        driver.find_element(By.CSS_SELECTOR, '#rows .row[data-seq="3"]').click()
        wait.until(lambda d: "Entry 3" in d.find_element(By.ID, "detail").text)
        payload = json.loads(driver.find_element(By.ID, "payload").text)
        assert payload == api(url, "/api/entries/3")["payload"], f"payload {payload}"
        assert "donald" in json.dumps(payload), f"payload {payload}"
        wait.until(lambda d: "/balances/donald" in d.find_element(By.ID, "diff").text)
        assert "seq=3" in driver.current_url, driver.current_url
        shoot(driver, shots, "entry.png")
        print("ok: clicking entry 3 shows its payload, the state after it and the diff")

        # The slider, moved with the keyboard: Home (entry 1), then one step right (entry 2).
        slider = driver.find_element(By.ID, "slider")
        slider.send_keys(Keys.HOME)
        slider.send_keys(Keys.ARROW_RIGHT)
        wait.until(lambda d: "Entry 2" in d.find_element(By.ID, "detail").text)
        wait.until(lambda d: "donald: 0" in d.find_element(By.ID, "state").text)
        assert "jenny: 10000" in driver.find_element(By.ID, "state").text
        assert "seq=2" in driver.current_url, driver.current_url
        print("ok: the slider moves to entry 2, shows its state and puts it in the URL")

        # A shared URL opens the same view.
        driver.get(url + "/#seq=12")
        wait.until(lambda d: "Entry 12" in d.find_element(By.ID, "detail").text)
        print("ok: a URL with #seq=12 opens entry 12")

        # Filter by type: only the transfers.
        transfer = api(url, "/api/entries/3")["typeName"]
        field = driver.find_element(By.ID, "filter-type")
        field.clear()
        field.send_keys(transfer)
        driver.find_element(By.ID, "apply").click()
        wait.until(lambda d: d.find_element(By.ID, "list-footer").text.startswith("20 matching"))
        types = {r.get_attribute("title") for r in driver.find_elements(By.CSS_SELECTOR, "#rows .row[data-seq]")}
        assert types == {transfer}, f"filtered rows show {types}"
        shoot(driver, shots, "filtered.png")
        print(f"ok: filtering by {transfer} shows the 20 transfers only")

        # Live: another process appends an entry; it shows without a reload.
        driver.find_element(By.ID, "clear").click()
        wait.until(lambda d: d.find_element(By.ID, "list-footer").text == "24 entries")
        driver.find_element(By.ID, "follow").click()
        started = time.monotonic()
        print("live: waiting", flush=True)
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '#rows .row[data-seq="25"]'))
        seconds = time.monotonic() - started
        wait.until(lambda d: "Entry 25" in d.find_element(By.ID, "detail").text)
        wait.until(lambda d: "donald: 500" in d.find_element(By.ID, "state").text)
        shoot(driver, shots, "live.png")
        print(f"ok: an entry written by another process shows in {seconds:.2f} s")
        assert seconds < 5, f"the live entry took {seconds:.2f} s"
    except Exception as error:  # noqa: BLE001 - the step's failure is the test's answer
        return failed(driver, error)
    finally:
        driver.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
