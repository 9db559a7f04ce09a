"""A campaign's report: its statistics and store gathered (`gather`), plotted (`plots`) and
written as one self-contained HTML file (`html`) and Markdown (`md`)."""

from campaigns.report.gather import DEFAULT_TOP, collect
from campaigns.report.html import render_html

__all__ = ["DEFAULT_TOP", "collect", "render_html"]
