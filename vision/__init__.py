"""cardtable's vision: camera and image frames to the cards on the table."""
