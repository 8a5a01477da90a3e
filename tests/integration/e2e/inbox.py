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
