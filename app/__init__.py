"""gradtrace's web app: the JSON API, the page, and the drawings, over engine/."""
