/**
 * The Open Asset Import Library's `assimp export` for 3D models: OBJ (without a material
 * file, so the output is one file), STL (binary), PLY, glTF binary, COLLADA, 3DS, DirectX
 * and 3MF, each to each. Textures and material files an input names are not carried over.
 */
import { probeBinaries, runStep, type Engine, type EngineProbe, type Step } from './engine.js';

const ASSIMP = '/usr/bin/assimp';
/** assimp's exporter ids. */
const EXPORTER: Readonly<Record<string, string>> = {
  obj: 'objnomtl', stl: 'stlb', ply: 'ply', glb: 'glb2', dae: 'collada', '3ds': '3ds', x: 'x', '3mf': '3mf',
};
const FORMATS = Object.keys(EXPORTER);

/** The assimp engine. */
export class AssimpEngine implements Engine {
  readonly name = 'assimp';
  readonly reads = FORMATS;
  readonly writes = FORMATS;

  tradesQualityForSize(): boolean {
    return false;
  }

  probe(): Promise<EngineProbe> {
    return probeBinaries(this.name, [ASSIMP], ['version'], /Version (\S+)/);
  }

  async convert(step: Step): Promise<void> {
    await runStep(step, ASSIMP, ['export', step.input, step.output, `-f${EXPORTER[step.to] ?? step.to}`], { maxMemoryBytes: 1024 ** 3 });
  }
}
