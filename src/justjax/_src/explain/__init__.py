"""The pipeline explorer: a report of every stage, its SVG graph, HTML page and command line."""
