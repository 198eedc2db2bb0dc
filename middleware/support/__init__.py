"""Small helpers every layer may use: retries, file locks, the cache folder, packaged resources, SQLite files."""
