/** 3D models (assimp). */
import type { FormatEntry } from '../catalogue.js';

export const MODELS3D: readonly FormatEntry[] = [
  { ext: 'obj', mime_type: 'model/obj', family: 'model', name: 'Wavefront OBJ model' },
  { ext: 'stl', mime_type: 'model/stl', family: 'model', name: 'STL model' },
  { ext: 'ply', mime_type: 'application/x-ply', family: 'model', name: 'Stanford PLY model' },
  { ext: 'glb', mime_type: 'model/gltf-binary', family: 'model', name: 'glTF binary model' },
  { ext: 'dae', mime_type: 'model/vnd.collada+xml', family: 'model', name: 'COLLADA model' },
  { ext: '3ds', mime_type: 'application/x-3ds', family: 'model', name: '3D Studio model' },
  { ext: 'x', mime_type: 'model/x-directx', family: 'model', name: 'DirectX model' },
  { ext: '3mf', mime_type: 'model/3mf', family: 'model', name: '3D Manufacturing Format model' },
];
