"""One reader (and writer where mbertlab writes the format back) per external data format."""
