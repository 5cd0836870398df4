"""The GraphQL API at ``/graphql`` (strawberry on the FastAPI app): types and resolvers that shape the
service's inputs and results (``schema.py``, ``types.py``), per-request DataLoaders over the service's
batched reads (``loaders.py``), who is calling (``context.py``) and errors with ``extensions.code``
(``errors.py``). Resolvers hold no rule of their own: bounds, views and namespace checks are the service's."""
