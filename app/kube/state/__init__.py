"""What the app holds in memory: the watch-fed store, its indexes and the facts the fit model
reads."""
