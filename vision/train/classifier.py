"""Train the card classifier with ultralytics, export it to ONNX, calibrate its temperature.

WHY this shape: a YOLOv8n-cls network from its YAML (no pretrained weights exist offline), trained
on small white-balanced crops (``vision.train.data``). ultralytics' own augmentations are switched
off (flips would swap nothing useful, HSV jitter would undo the white balance, random crops would
cut corner indices): ours are applied when the crops are rendered. The export carries two outputs,
logits and the penultimate features, so that deck enrolment can compare embeddings; the softmax
temperature is fitted on a separate split of renders (never on real photos).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import cv2
import numpy as np

os.environ.setdefault("YOLO_OFFLINE", "1")


def train_yolo(data: Path, runs: Path, imgsz: int, epochs: int, batch: int, workers: int,
               name: str = "cls", seed: int = 0) -> Path:
    """Train ``yolov8n-cls.yaml`` from scratch on the image folder ``data``; returns best.pt.
    ``seed`` is the training's (weights, batch order), not the renders'."""
    from ultralytics import YOLO
    from ultralytics.utils import SETTINGS

    SETTINGS.update({"sync": False})
    model = YOLO("yolov8n-cls.yaml")
    model.train(
        data=str(data), imgsz=imgsz, epochs=epochs, batch=batch, workers=workers, device="cpu",
        project=str(runs), name=name, exist_ok=True, pretrained=False, amp=False, plots=False,
        fliplr=0.0, flipud=0.0, hsv_h=0.0, hsv_s=0.0, hsv_v=0.0, erasing=0.0, auto_augment=None,
        scale=0.0, cache="ram", seed=seed, deterministic=False, verbose=False, patience=100,
        lr0=0.002, optimizer="AdamW", warmup_epochs=1, cos_lr=True,
    )
    return Path(runs) / name / "weights" / "best.pt"


def export_onnx(weights: Path, out: Path, imgsz: int) -> tuple[list[str], int]:
    """Export logits and penultimate features as two ONNX outputs; returns (classes, feat dim)."""
    import torch
    from ultralytics import YOLO

    yolo = YOLO(str(weights))
    net = yolo.model.float().eval()
    names = [net.names[i] for i in range(len(net.names))]

    class Wrapped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = torch.nn.Sequential(*list(net.model)[:-1])
            self.head = net.model[-1]

        def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            f = self.head.pool(self.head.conv(self.body(x))).flatten(1)
            return self.head.linear(f), f

    wrapped = Wrapped().eval()
    x = torch.zeros(1, 3, imgsz, imgsz)
    with torch.no_grad():
        logits, feats = wrapped(x)
        ref = net(x)
        ref = ref[0] if isinstance(ref, (tuple, list)) else ref
        assert torch.allclose(torch.softmax(logits, 1), ref, atol=1e-4), "export wrapper drifted"
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(
        wrapped, x, str(out), input_names=["images"], output_names=["logits", "features"],
        dynamic_axes={"images": {0: "n"}, "logits": {0: "n"}, "features": {0: "n"}},
        opset_version=17, dynamo=False,
    )
    return names, int(feats.shape[1])


def fit_temperature(logits: np.ndarray, labels: np.ndarray) -> float:
    """The softmax temperature minimising held-out negative log-likelihood (grid search)."""
    best_t, best_nll = 1.0, np.inf
    for t in np.exp(np.linspace(np.log(0.3), np.log(10), 80)):
        z = logits / t
        z = z - z.max(1, keepdims=True)
        nll = float(np.mean(np.log(np.exp(z).sum(1)) - z[np.arange(len(z)), labels]))
        if nll < best_nll:
            best_t, best_nll = float(t), nll
    return best_t


def calibrate(model_path: Path, calib_dir: Path) -> dict:
    """Fit the temperature on ``calib_dir`` renders and write it into the sidecar JSON."""
    from vision.classifier import CardClassifier

    clf = CardClassifier.load(model_path)
    index = {c: i for i, c in enumerate(clf.classes)}
    crops, labels = [], []
    for folder in sorted(calib_dir.iterdir()):
        for f in sorted(folder.glob("*.png")):
            crops.append(cv2.imread(str(f)))
            labels.append(index[folder.name])
    y = np.array(labels)
    logits = np.concatenate([clf.run(crops[i:i + 256])[0] for i in range(0, len(crops), 256)])
    t = fit_temperature(logits, y)
    meta_path = model_path.with_suffix(".json")
    meta = json.loads(meta_path.read_text())
    meta["temperature"] = round(t, 4)
    top1 = float((logits.argmax(1) == y).mean())
    meta["calibration"] = {"renders": len(y), "top1": round(top1, 4)}
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def train_classifier(out_dir: Path, runs: Path, imgsz: int, per_class: dict[str, int], epochs: int,
                     batch: int = 128, workers: int = 2, log=print, seed: int = 0) -> dict:
    """The whole recipe: render data, train, export ONNX + JSON, calibrate. Returns the metadata.

    ``seed`` 0 is the network every reader uses; ``seed`` N > 0 a later training, read beside
    it by the single-card reader when N is one of :data:`vision.classifier.LATER_SEEDS` (their
    probabilities averaged). What each seed renders: :meth:`vision.train.data.CardRecipe.for_seed`.
    """
    from vision.classifier import training_path
    from vision.train.data import CardRecipe, build_dataset

    t0 = time.time()
    data = runs / "classifier_data"
    n = build_dataset(data, per_class, imgsz, workers=workers,
                      recipe=CardRecipe.for_seed(seed))
    log(f"rendered {n} crops in {time.time() - t0:.0f} s")
    t1 = time.time()
    best = train_yolo(data, runs, imgsz, epochs, batch, workers, seed=seed)
    log(f"trained {epochs} epochs in {time.time() - t1:.0f} s")
    onnx_path = training_path(seed, out_dir)
    classes, feat_dim = export_onnx(best, onnx_path, imgsz)
    meta = {
        "classes": classes, "input_size": imgsz, "temperature": 1.0, "feature_dim": feat_dim,
        "preprocess": "portrait, resize to a square, white balance by the border, RGB/255",
        "training": {"per_class": per_class, "epochs": epochs, "batch": batch,
                     "architecture": "yolov8n-cls.yaml (from scratch)",
                     **({"seed": seed} if seed else {})},
    }
    onnx_path.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
    meta = calibrate(onnx_path, data / "calib")
    shutil.rmtree(data / "calib", ignore_errors=True)
    log(f"exported {onnx_path} ({onnx_path.stat().st_size / 1e6:.1f} MB), "
        f"temperature {meta['temperature']}, calib top-1 {meta['calibration']['top1']}; "
        f"total {time.time() - t0:.0f} s")
    return meta
