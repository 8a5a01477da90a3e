"""Locators and matchers the inbox's browser tests share (the dashboard's feed)."""
import re


def rows(page):
    """Every row of the feed."""
    return page.locator("#feed li.notification")


def row(page, entry_id):
    """The row that shows the notification ``entry_id``."""
    return page.locator(f'#feed li.notification[data-id="{entry_id}"]')


def has_class(name):
    """A pattern for Playwright's to_have_class: ``name`` among the classes."""
    return re.compile(rf"\b{name}\b")


def current_id(page):
    """The id of the row that holds the focus, or None."""
    return page.evaluate("document.activeElement.closest('li.notification')?.dataset.id || null")


# The rows the feed draws at first: the top of the list, more as the user scrolls
# (static/js/views/feed-window.js, herald.FEED_PAGE).
FEED_PAGE = 50
FEED_SLACK = 25  # rows past the window, at most, before they are let go together


def expect_held(page, count, timeout):
    """Wait until the page holds ``count`` notifications (one REST page is 100)."""
    page.wait_for_function("n => herald.notifications.length === n", arg=count, timeout=timeout)


def scroll_to_draw(page, count, timeout):
    """Scroll to the feed's end, as a reader would, until ``count`` rows are drawn."""
    page.wait_for_function(
        "n => { document.querySelector('.feed-end').scrollIntoView(); "
        "return document.querySelectorAll('#feed li.notification').length >= n; }",
        arg=count, timeout=timeout, polling=100)
