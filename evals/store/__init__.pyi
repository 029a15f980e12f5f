from .store import Store as Store
from .store import StoredEvaluation as StoredEvaluation
from .store import open_store as open_store
from .store import open_viewer_store as open_viewer_store
