export default (context) => "Default prompt on {{ topic }}";
