"""The HTTP face of Herald: the JSON API, sign-in and tokens, the pages, the
browser client's files, security headers, rate limits and per-app extensions."""
