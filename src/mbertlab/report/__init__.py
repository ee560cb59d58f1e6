"""Reports: tables and plots rendered from results.db into Markdown and one self-contained HTML page."""
