"""libdynrt from Python: the loaded model, trainable models, communicators."""
