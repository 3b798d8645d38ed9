"""`hookviz report`: an item analysis of a graded batch, as a self-contained web page."""
