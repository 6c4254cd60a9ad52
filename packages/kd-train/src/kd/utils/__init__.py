"""kd.utils: Kauldron's `kd.utils` names (`status`, `config_util`, `utils`, `immutabledict`).

kd.utils.status.log("Starting evaluation")            # printed on the lead host, logged everywhere
class MyEval(kd.utils.config_util.BaseConfig, kd.utils.config_util.UpdateFromRootCfg): ...
for i, batch in kd.utils.utils.enum_iter(ds, desc="eval"): ...
"""

from kd.utils import config_util as config_util
from kd.utils import immutabledict as immutabledict
from kd.utils import utils as utils
from kd.utils.status_utils import status as status

__all__ = ["config_util", "immutabledict", "status", "utils"]
