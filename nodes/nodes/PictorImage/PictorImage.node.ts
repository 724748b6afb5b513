import { NodeConnectionTypes, type IExecuteFunctions, type INodeExecutionData, type INodeType, type INodeTypeDescription } from 'n8n-workflow';
import { pictorImageProperties } from './node-properties.js';
import { CREDENTIAL_NAME } from './pictor-credentials.js';
import { runPictorImage } from './run-pictor-image.js';

export class PictorImage implements INodeType {
  description: INodeTypeDescription = {
    displayName: 'Pictor Image',
    name: 'pictorImage',
    icon: { light: 'file:../../icons/pictor.svg', dark: 'file:../../icons/pictor.dark.svg' },
    group: ['transform'],
    version: 1,
    subtitle: '={{ $parameter["operation"] === "edit" ? "Edit images" : "Generate images" }}',
    description: 'Generate and edit images with a gpt-image-2 style image service, paced to your account limits',
    defaults: { name: 'Pictor Image' },
    usableAsTool: true,
    inputs: [NodeConnectionTypes.Main],
    outputs: [NodeConnectionTypes.Main],
    credentials: [{ name: CREDENTIAL_NAME, required: true }],
    properties: pictorImageProperties,
  };

  async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
    return runPictorImage(this);
  }
}
