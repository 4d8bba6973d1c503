"""`justjax.nn`: neural-network functions. Re-exports only."""
from justjax.numpy import tanh as tanh
from justjax.nn import initializers as initializers
from justjax._src.nn.attention import dot_product_attention as dot_product_attention
from justjax._src.nn.scaled_dot import (
    get_scaled_dot_general_config as get_scaled_dot_general_config,
    scaled_dot_general as scaled_dot_general,
    scaled_matmul as scaled_matmul,
)
from justjax._src.nn.functions import (
    celu as celu,
    elu as elu,
    gelu as gelu,
    glu as glu,
    hard_sigmoid as hard_sigmoid,
    hard_silu as hard_silu,
    hard_swish as hard_swish,
    hard_tanh as hard_tanh,
    identity as identity,
    leaky_relu as leaky_relu,
    log1mexp as log1mexp,
    log_sigmoid as log_sigmoid,
    log_softmax as log_softmax,
    logmeanexp as logmeanexp,
    logsumexp as logsumexp,
    mish as mish,
    one_hot as one_hot,
    relu as relu,
    relu6 as relu6,
    selu as selu,
    sigmoid as sigmoid,
    silu as silu,
    soft_sign as soft_sign,
    softmax as softmax,
    softplus as softplus,
    sparse_plus as sparse_plus,
    sparse_sigmoid as sparse_sigmoid,
    squareplus as squareplus,
    standardize as standardize,
    swish as swish,
)
