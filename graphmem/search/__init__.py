"""The search layer both front ends call through the service: retrieval over the time views."""
