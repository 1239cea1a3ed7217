#!/usr/bin/env python3
"""Reference data for octet's training tests (tests/quant/training), made with PyTorch 1.13 and numpy.

  digits_train_x_u8.npy / digits_train_labels.npy
      the first 1437 images of ../models/digits.csv.gz (the QAT issue's training split; the last 360 are
      ../models/digits_test_x.npy), grey levels 0..16 as uint8 [1437, 64] (octet divides by 16), labels int32.
  sgd_reference.json
      torch.optim.SGD trajectories (lr, momentum, dampening 0, weight decay, nesterov off and on) on fixed
      parameters and gradients, and the learning rates of torch.optim.lr_scheduler.StepLR and CosineAnnealingLR.

Run with /usr/bin/python3 (torch 1.13) from any directory; it rewrites the files beside this script.
"""
import gzip
import json
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def digits():
    with gzip.open(os.path.join(HERE, "..", "models", "digits.csv.gz"), "rt") as f:
        rows = np.loadtxt(f, delimiter=",", dtype=np.float32)
    x = rows[:1437, :64].astype(np.uint8)
    y = rows[:1437, 64].astype(np.int32)
    assert (rows[:1437, :64] == x).all()
    np.save(os.path.join(HERE, "digits_train_x_u8.npy"), x)
    np.save(os.path.join(HERE, "digits_train_labels.npy"), y)


def sgd_case(lr, momentum, weight_decay, nesterov, steps=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    p = torch.randn(7, generator=g)
    grads = [torch.randn(7, generator=g) for _ in range(steps)]
    param = torch.nn.Parameter(p.clone())
    opt = torch.optim.SGD([param], lr=lr, momentum=momentum, weight_decay=weight_decay, nesterov=nesterov)
    trajectory = []
    for grad in grads:
        param.grad = grad.clone()
        opt.step()
        trajectory.append(param.detach().tolist())
    return {"lr": lr, "momentum": momentum, "weight_decay": weight_decay, "nesterov": nesterov,
            "initial": p.tolist(), "grads": [t.tolist() for t in grads], "trajectory": trajectory}


def schedule(make, epochs):
    param = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([param], lr=0.1)
    sched = make(opt)
    lrs = []
    for _ in range(epochs):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return lrs


def reference():
    out = {
        "torch_version": torch.__version__,
        "sgd": [sgd_case(0.1, 0.0, 0.0, False), sgd_case(0.05, 0.9, 0.0, False, seed=1),
                sgd_case(0.05, 0.9, 1e-2, False, seed=2), sgd_case(0.2, 0.0, 5e-4, False, seed=3),
                sgd_case(0.05, 0.9, 1e-3, True, seed=4)],
        "step_lr": {"base_lr": 0.1, "step_size": 3, "gamma": 0.5,
                    "lrs": schedule(lambda o: torch.optim.lr_scheduler.StepLR(o, 3, gamma=0.5), 12)},
        "cosine_lr": {"base_lr": 0.1, "t_max": 5, "eta_min": 0.001,
                      "lrs": schedule(lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, 5, eta_min=0.001), 17)},
    }
    with open(os.path.join(HERE, "sgd_reference.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    digits()
    reference()
