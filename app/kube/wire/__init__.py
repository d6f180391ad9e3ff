"""What the API server sends, decoded (msgspec structs) and projected to the slim views the
app keeps."""
