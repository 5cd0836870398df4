"""The HTTP front end: the /v1 memory API (the seed's paths), /api/credentials, /metrics and the offline API
docs. Routes authenticate through the identity module, build the service's inputs and shape its results."""
