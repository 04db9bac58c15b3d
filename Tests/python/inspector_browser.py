#!/usr/bin/env python3
"""The inspector in a real browser: headless Chromium driven by Selenium and chromedriver.

    inspector_browser.py URL [SCREENSHOT_DIR]
    inspector_browser.py --in-app URL [SCREENSHOT_DIR]

Screenshots are saved only when SCREENSHOT_DIR is given.

URL is a running `serve` of a ledger log (typed, so states show) of 24 entries: a deposit, an
opening, 20 transfers, an undo and a restore. For the live step the script prints
`live: waiting` and the test, in its own process, sends a deposit of 500 to donald through the
ledger's store. Prints one `ok: …` line per step and exits 0, or names the step that failed and
exits 1.

With --in-app, URL (with its ?token=) is the inspector a test serves from a live ledger store in its
own process, with the undo, redo and restore buttons on: the script clicks Undo, then Restore on
entry 2, and sees each new entry appear in the list.
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


def main():
    if sys.argv[1] == "--in-app":
        return in_app(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
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
