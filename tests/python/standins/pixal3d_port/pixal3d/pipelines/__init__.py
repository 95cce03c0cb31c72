from .pixal3d_image_to_3d import Pixal3DImageTo3DPipeline  # noqa: F401
